//! Usage and cost, from what the chats already record (`ai usage`, the monthly budget).
//!
//! Every reply (an assistant message, and each tool round before it) carries the provider and
//! model that wrote it, and the tokens and cost the backend reported. Where tokens were not
//! reported (most CLIs), they are estimated from the text (about 4 characters a token; the
//! input from the estimated size of the conversation sent); where no cost was reported, it is
//! computed from the price table ([`crate::prices`]). Either is marked estimated.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::time::{Duration, SystemTime};

use chrono::{DateTime, Datelike, TimeZone, Utc};
use memchr::memmem;
use serde::{Deserialize, Serialize};

use crate::chat::scan::{self, Entry};
use crate::chat::store::Store;
use crate::config::{Budget, OnExceed};
use crate::error::{Error, Result};
use crate::prices;

/// How rows are grouped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum By {
    /// `provider:model`.
    Model,
    Provider,
    /// The UTC day of the reply.
    Day,
}

/// The totals of one group (or of all).
#[derive(Debug, Clone, Default, Serialize)]
pub(crate) struct Totals {
    pub(crate) replies: u64,
    pub(crate) input_tokens: u64,
    pub(crate) output_tokens: u64,
    /// Replies whose tokens were estimated from their text (the backend reported none).
    pub(crate) tokens_estimated: u64,
    /// Reported and estimated costs together, in US dollars.
    pub(crate) cost_usd: f64,
    /// The part of `cost_usd` computed from the price table.
    pub(crate) cost_estimated_usd: f64,
    /// Replies of models the price table does not know (not in the cost).
    pub(crate) unpriced: u64,
}

#[derive(Debug, Serialize)]
pub(crate) struct Row {
    pub(crate) key: String,
    #[serde(flatten)]
    pub(crate) totals: Totals,
}

#[derive(Debug, Serialize)]
pub(crate) struct Report {
    /// The start of the period (RFC 3339), or none for all time.
    pub(crate) since: Option<String>,
    pub(crate) by: &'static str,
    /// Biggest cost first (by day: oldest day first).
    pub(crate) rows: Vec<Row>,
    pub(crate) total: Totals,
    /// Chats read.
    pub(crate) chats: usize,
    pub(crate) unreadable: usize,
}

/// One reply as the chats record it.
#[derive(Debug, Clone)]
struct Reply {
    ts: DateTime<Utc>,
    provider: String,
    model: String,
    input: u64,
    output: u64,
    tokens_estimated: bool,
    reported_cost: Option<f64>,
}

impl Reply {
    fn add_to(&self, t: &mut Totals) {
        t.replies += 1;
        t.input_tokens += self.input;
        t.output_tokens += self.output;
        t.tokens_estimated += u64::from(self.tokens_estimated);
        match self.reported_cost {
            Some(c) => t.cost_usd += c,
            None => match prices::price(&self.provider, &self.model) {
                Some(p) => {
                    let c = p.cost(self.input, self.output);
                    t.cost_usd += c;
                    t.cost_estimated_usd += c;
                }
                None => t.unpriced += 1,
            },
        }
    }
}

/// What a usage line needs of a record; the content is read only for its length.
#[derive(Deserialize)]
struct Line<'a> {
    #[serde(rename = "type")]
    kind: Cow<'a, str>,
    #[serde(default)]
    role: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    content: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    text: Option<Cow<'a, str>>,
    ts: Option<Cow<'a, str>>,
    #[serde(default)]
    alias: Option<String>,
    #[serde(default)]
    provider: Option<String>,
    #[serde(default)]
    model: Option<String>,
    #[serde(default)]
    usage: Option<crate::chat::record::Usage>,
    #[serde(default)]
    history_tokens: Option<u64>,
}

/// The replies of one chat file written at or after `since`.
fn replies_of(bytes: &[u8], since: Option<DateTime<Utc>>) -> Vec<Reply> {
    // Only lines that can be replies are decoded (whatever spacing their writer used).
    let assistant = memmem::Finder::new(b"assistant");
    let round = memmem::Finder::new(b"round");
    let mut out = Vec::new();
    for (_, line) in scan::lines(bytes).skip(1) {
        if assistant.find(line).is_none() && round.find(line).is_none() {
            continue;
        }
        let Ok(l) = serde_json::from_slice::<Line>(line) else {
            continue;
        };
        let is_reply = match l.kind.as_ref() {
            "message" => l.role.as_deref() == Some("assistant"),
            "round" => true,
            _ => false,
        };
        let Some(ts) =
            l.ts.as_deref()
                .and_then(|t| DateTime::parse_from_rfc3339(t).ok())
                .map(|t| t.with_timezone(&Utc))
        else {
            continue;
        };
        if !is_reply || since.is_some_and(|s| ts < s) {
            continue;
        }
        let text_chars = l
            .content
            .as_deref()
            .or(l.text.as_deref())
            .map_or(0, |c| c.chars().count() as u64);
        let usage = l.usage.unwrap_or_default();
        let (input, output, estimated) = match (usage.input, usage.output) {
            (Some(i), Some(o)) => (i, o, false),
            (i, o) => {
                let out_est = o.unwrap_or(text_chars.div_ceil(4));
                let in_est =
                    i.unwrap_or_else(|| l.history_tokens.map_or(0, |h| h.saturating_sub(out_est)));
                (in_est, out_est, true)
            }
        };
        out.push(Reply {
            ts,
            provider: l.provider.unwrap_or_else(|| "unknown".into()),
            model: l.model.or(l.alias).unwrap_or_else(|| "unknown".into()),
            input,
            output,
            tokens_estimated: estimated,
            reported_cost: usage.cost_usd,
        });
    }
    out
}

/// Every reply in `store` at or after `since`, and the counts of chats read and unreadable.
fn collect(store: &Store, since: Option<DateTime<Utc>>) -> Result<(Vec<Reply>, usize, usize)> {
    // A chat not changed since the start holds nothing newer.
    let since_time = since.map(|s| {
        SystemTime::UNIX_EPOCH + Duration::from_secs(u64::try_from(s.timestamp()).unwrap_or(0))
    });
    let scanned = scan::scan(store, since_time, &|_: &Entry, bytes: &[u8]| {
        let r = replies_of(bytes, since);
        (!r.is_empty()).then_some(r)
    })?;
    let replies = scanned.found.into_iter().flat_map(|(_, r)| r).collect();
    Ok((replies, scanned.read, scanned.unreadable))
}

/// The usage report of `store` since `since` (all time when `None`), grouped `by`.
pub(crate) fn report(store: &Store, since: Option<DateTime<Utc>>, by: By) -> Result<Report> {
    let (replies, chats, unreadable) = collect(store, since)?;
    let mut groups: BTreeMap<String, Totals> = BTreeMap::new();
    let mut total = Totals::default();
    for r in &replies {
        let key = match by {
            By::Model => format!("{}:{}", r.provider, r.model),
            By::Provider => r.provider.clone(),
            By::Day => r.ts.format("%Y-%m-%d").to_string(),
        };
        r.add_to(groups.entry(key).or_default());
        r.add_to(&mut total);
    }
    let mut rows: Vec<Row> = groups
        .into_iter()
        .map(|(key, totals)| Row { key, totals })
        .collect();
    if by != By::Day {
        rows.sort_by(|a, b| {
            b.totals
                .cost_usd
                .total_cmp(&a.totals.cost_usd)
                .then_with(|| b.totals.replies.cmp(&a.totals.replies))
                .then_with(|| a.key.cmp(&b.key))
        });
    }
    Ok(Report {
        since: since.map(|s| s.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)),
        by: match by {
            By::Model => "model",
            By::Provider => "provider",
            By::Day => "day",
        },
        rows,
        total,
        chats,
        unreadable,
    })
}

/// The first instant of this calendar month, UTC.
pub(crate) fn month_start(now: DateTime<Utc>) -> DateTime<Utc> {
    Utc.with_ymd_and_hms(now.year(), now.month(), 1, 0, 0, 0)
        .single()
        .unwrap_or(now)
}

/// This month's spend so far: (dollars, whether any of it is estimated).
pub(crate) fn month_spend(store: &Store) -> Result<(f64, bool)> {
    let (replies, _, _) = collect(store, Some(month_start(Utc::now())))?;
    let mut t = Totals::default();
    for r in &replies {
        r.add_to(&mut t);
    }
    Ok((t.cost_usd, t.cost_estimated_usd > 0.0))
}

/// Before a call to a paid model: has this month's spend passed the budget? With `warn`, a
/// warning through `warn`; with `fail`, an error (nothing is sent).
pub(crate) fn check_budget(store: &Store, budget: &Budget, warn: &dyn Fn(&str)) -> Result<()> {
    let (spent, estimated) = month_spend(store)?;
    if spent < budget.monthly_usd {
        return Ok(());
    }
    let what = format!(
        "this month's spend, {}{} passed the budget of {} (config budget.monthly_usd)",
        dollars(spent),
        if estimated {
            " (partly estimated),"
        } else {
            ","
        },
        dollars(budget.monthly_usd)
    );
    match budget.on_exceed {
        OnExceed::Warn => {
            warn(&what);
            Ok(())
        }
        OnExceed::Fail => Err(Error::config(format!("{what}; nothing was sent")).hint(
            "`ai usage --since 30d` shows where it went; raise budget.monthly_usd, set budget.on_exceed to \"warn\", or use a local model",
        )),
    }
}

/// `$0.0123` under a dollar, `$12.35` above.
pub(crate) fn dollars(v: f64) -> String {
    if v < 1.0 {
        format!("${v:.4}")
    } else {
        format!("${v:.2}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replies_are_read_with_reported_or_estimated_tokens() {
        let text = concat!(
            r#"{"type":"chat","v":1,"id":"K7Q","created":"2026-11-01T00:00:00Z"}"#,
            "\n",
            r#"{"type":"message","role":"user","content":"hi","ts":"2026-11-02T00:00:00Z"}"#,
            "\n",
            r#"{"type":"message","role":"assistant","content":"12345678","ts":"2026-11-02T00:00:01Z","provider":"claude","model":"sonnet","history_tokens":10}"#,
            "\n",
            r#"{"type":"round","turn":2,"round":1,"ts":"2026-11-03T00:00:00Z","provider":"openai","model":"gpt-4o","usage":{"input":100,"output":10}}"#,
            "\n",
            r#"{"type":"message","role":"assistant","content":"x","ts":"2026-11-03T00:00:01Z","provider":"openai","model":"gpt-4o","usage":{"input":1000,"output":20,"cost_usd":0.5}}"#,
            "\n",
        );
        let r = replies_of(text.as_bytes(), None);
        assert_eq!(r.len(), 3);
        assert_eq!(
            (r[0].input, r[0].output, r[0].tokens_estimated),
            (8, 2, true)
        );
        assert_eq!(
            (r[1].input, r[1].output, r[1].tokens_estimated),
            (100, 10, false)
        );
        assert_eq!(r[2].reported_cost, Some(0.5));
        let since = DateTime::parse_from_rfc3339("2026-11-03T00:00:00Z")
            .unwrap()
            .with_timezone(&Utc);
        assert_eq!(replies_of(text.as_bytes(), Some(since)).len(), 2);
        let mut t = Totals::default();
        for x in &r {
            x.add_to(&mut t);
        }
        assert_eq!(t.replies, 3);
        assert!(
            (t.cost_usd - (0.5 + 0.00035 + 0.000054)).abs() < 1e-9,
            "{t:?}"
        );
        assert!(t.cost_estimated_usd > 0.0);
    }

    #[test]
    fn lines_written_with_spaces_are_read_too() {
        let text = concat!(
            r#"{"type": "chat", "v": 1, "id": "K7Q", "created": "2026-11-01T00:00:00Z"}"#,
            "\n",
            r#"{"type": "message", "role": "assistant", "content": "x", "ts": "2026-11-02T00:00:01Z", "provider": "openai", "model": "gpt-4o", "usage": {"input": 5, "output": 6}}"#,
            "\n",
        );
        let r = replies_of(text.as_bytes(), None);
        assert_eq!((r.len(), r[0].input, r[0].output), (1, 5, 6));
    }

    #[test]
    fn month_start_is_the_first() {
        let t = DateTime::parse_from_rfc3339("2026-11-26T01:02:03Z")
            .unwrap()
            .with_timezone(&Utc);
        assert_eq!(
            month_start(t).to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
            "2026-11-01T00:00:00Z"
        );
    }
}
