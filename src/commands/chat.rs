//! `ai chat list | show | delete | rename | gc | new`.

use std::path::PathBuf;
use std::time::{Duration, SystemTime};

use comfy_table::{Table, presets};
use serde::Serialize;

use crate::alias;
use crate::chat::read;
use crate::chat::record::{self, Header, Record, Role};
use crate::chat::store::{self, Wait};
use crate::ctx::Ctx;
use crate::error::{Error, Result};
use crate::fmt::one_line;
use crate::output::{self, sanitize};

pub(crate) fn list(ctx: &Ctx, json: bool, limit: usize) -> Result<()> {
    let mut entries = listed_entries(ctx)?;
    let total = entries.len();
    if limit > 0 {
        entries.truncate(limit);
    }
    // Every entry makes a row (a damaged one says so), so `total` counts only listable rows.
    let rows: Vec<read::Row> = entries
        .into_iter()
        .map(|(mtime, id, path, legacy)| read::row(&id, &path, legacy, mtime))
        .collect();
    if json {
        let mut text =
            serde_json::to_string_pretty(&rows).map_err(|e| Error::backend(e.to_string()))?;
        text.push('\n');
        return output::print_stdout(&text);
    }
    if rows.is_empty() {
        ctx.ui
            .notice("ai: no chats yet (every prompt is saved as one: ai echo \"hi\")");
        return Ok(());
    }
    let now = SystemTime::now();
    let mut table = Table::new();
    table.load_preset(presets::NOTHING);
    table.set_header(vec!["ID", "MODEL", "TURNS", "LAST USED", "TITLE"]);
    for r in &rows {
        let used = SystemTime::UNIX_EPOCH + Duration::from_secs(r.last_used);
        table.add_row(vec![
            r.id.clone(),
            sanitize(r.model.as_deref().unwrap_or("-")),
            r.turns.to_string(),
            ago(now.duration_since(used).unwrap_or_default()),
            one_line(&r.title, 60),
        ]);
    }
    let mut out = output::trim_lines(&table.to_string());
    out.push('\n');
    output::print_stdout(&out)?;
    if total > rows.len() {
        ctx.ui.notice(&format!(
            "ai: {} of {total} chats shown; --limit 0 shows all",
            rows.len()
        ));
    }
    Ok(())
}

/// `ai chat search TEXT`: the matching chats, newest first, each with the line that matched.
pub(crate) fn search(ctx: &Ctx, text: &str, json: bool, limit: usize) -> Result<()> {
    let found = crate::chat::search::search(&ctx.store, text, limit)?;
    if found.unreadable > 0 {
        ctx.ui.notice(&format!(
            "ai: {} chat file{} could not be read and {} not searched (`ai chat list` shows which)",
            found.unreadable,
            if found.unreadable == 1 { "" } else { "s" },
            if found.unreadable == 1 { "was" } else { "were" },
        ));
    }
    if json {
        let mut out =
            serde_json::to_string_pretty(&found).map_err(|e| Error::backend(e.to_string()))?;
        out.push('\n');
        return output::print_stdout(&out);
    }
    if found.hits.is_empty() {
        ctx.ui.notice(&format!(
            "ai: no chat holds every word of '{}' ({} searched)",
            sanitize(&found.query),
            found.searched
        ));
        return Ok(());
    }
    let mut out = String::new();
    for h in &found.hits {
        let who = match h.role {
            "user" => "you".to_owned(),
            "title" => "title".to_owned(),
            _ => h.model.clone().unwrap_or_else(|| "assistant".into()),
        };
        let date: String = sanitize(&h.date).chars().take(10).collect();
        out.push_str(&format!(
            "{}  {date}  {}\n    {who}: {}\n",
            h.id, h.title, h.line
        ));
    }
    output::print_stdout(&out)?;
    if found.matched > found.hits.len() {
        ctx.ui.notice(&format!(
            "ai: {} of {} matching chats shown; --limit 0 shows all",
            found.hits.len(),
            found.matched
        ));
    }
    Ok(())
}

/// Every entry of the chats folder with its modification time, most recent first. A folder
/// that cannot be read is an error, not "no chats".
fn listed_entries(ctx: &Ctx) -> Result<Vec<(SystemTime, String, PathBuf, bool)>> {
    let mut entries: Vec<(SystemTime, String, PathBuf, bool)> = ctx
        .store
        .entries()?
        .into_iter()
        .filter_map(|(id, path, legacy)| {
            // Not following links: a link is listed as what it is (damaged), by its own time.
            let mtime = path.symlink_metadata().and_then(|m| m.modified()).ok()?;
            Some((mtime, id, path, legacy))
        })
        .collect();
    entries.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
    Ok(entries)
}

/// Indexes of pending prompts not sent again since (no later prompt with the same text).
fn unanswered(records: &[Record]) -> std::collections::HashSet<usize> {
    records
        .iter()
        .enumerate()
        .filter_map(|(i, r)| match r {
            Record::Pending(p) => {
                let resent = records[i + 1..]
                    .iter()
                    .any(|later| matches!(later, Record::Message(m) if m.role == Role::User && m.content == p.content));
                (!resent).then_some(i)
            }
            _ => None,
        })
        .collect()
}

fn ago(d: Duration) -> String {
    let s = d.as_secs();
    match s {
        0..=59 => "just now".into(),
        60..=3599 => format!("{}m ago", s / 60),
        3600..=86_399 => format!("{}h ago", s / 3600),
        _ => format!("{}d ago", s / 86_400),
    }
}

pub(crate) fn existing(ctx: &Ctx, id: &str) -> Result<String> {
    store::check_id(id)?;
    ctx.store.find(id).ok_or_else(|| {
        Error::not_found(format!("no chat '{id}'")).hint("`ai chat list` shows your chats")
    })
}

/// Read a whole chat for `chat export`: every record that can be read. Damaged lines are left
/// out with a notice naming them, so a damaged chat can still be saved elsewhere (`chat show`
/// refuses it and says where the damage is).
pub(crate) fn read_all(ctx: &Ctx, id: &str) -> Result<(Header, Vec<Record>)> {
    let (header, records, left_out) = read::read_salvage(&ctx.store, id)?;
    if !left_out.is_empty() {
        let lines: Vec<String> = left_out.iter().map(ToString::to_string).collect();
        ctx.ui.notice(&format!(
            "ai: chat {id} is damaged: line{} {} could not be read and {} left out; the other {} records are exported",
            if lines.len() == 1 { "" } else { "s" },
            lines.join(", "),
            if lines.len() == 1 { "is" } else { "are" },
            records.len()
        ));
    }
    Ok((header, records))
}

pub(crate) fn show(ctx: &Ctx, id: &str, json: bool, stats: bool) -> Result<()> {
    let id = existing(ctx, id)?;
    let (header, records) = read::read_all(&ctx.store, &id)?;
    if stats {
        return show_stats(&header, &records, json);
    }
    if json {
        #[derive(Serialize)]
        struct Shown<'a> {
            #[serde(flatten)]
            header: &'a Header,
            records: &'a [Record],
        }
        let mut text = serde_json::to_string_pretty(&Shown {
            header: &header,
            records: &records,
        })
        .map_err(|e| Error::backend(e.to_string()))?;
        text.push('\n');
        return output::print_stdout(&text);
    }
    let mut out = format!("chat {}", header.id);
    if let Some(t) = &header.title {
        out.push_str(&format!(" · {}", one_line(t, 80)));
    }
    out.push_str(&format!("\ncreated {}", sanitize(&header.created)));
    if let Some(m) = &header.model {
        out.push_str(&format!(" with {}", sanitize(m)));
    }
    out.push('\n');
    if let Some(s) = &header.system {
        out.push_str(&format!("\n── system ──\n{}\n", sanitize(s)));
    }
    let waiting = unanswered(&records);
    for (i, r) in records.iter().enumerate() {
        match r {
            Record::Message(m) => {
                let who = match m.role {
                    Role::User => "you".to_owned(),
                    Role::Assistant => sanitize(
                        m.origin
                            .alias
                            .as_deref()
                            .or(m.origin.model.as_deref())
                            .unwrap_or("assistant"),
                    ),
                };
                let mark = if m.interrupted { " (interrupted)" } else { "" };
                out.push_str(&format!(
                    "\n── {who} · {}{mark} ──\n{}\n",
                    short_ts(&m.ts),
                    sanitize(m.content.trim_end())
                ));
                for a in &m.attachments {
                    out.push_str(&attachment_line(&ctx.store, &header.id, a));
                }
                if !m.sources.is_empty() {
                    out.push_str("sources:\n");
                    for (n, s) in m.sources.iter().enumerate() {
                        out.push_str(&format!(
                            "  [{}] {}{} ({}, {})\n",
                            n + 1,
                            s.ordering
                                .as_deref()
                                .map(|o| format!("{} ", sanitize(o)))
                                .unwrap_or_default(),
                            one_line(s.title.as_deref().unwrap_or(""), 80),
                            sanitize(&s.id),
                            sanitize(&s.kb)
                        ));
                    }
                }
            }
            Record::Pending(p) => {
                let then = if waiting.contains(&i) {
                    format!("resend with ai chat retry {}", header.id)
                } else {
                    "sent again later".to_owned()
                };
                out.push_str(&format!(
                    "\n── you · {} (failed: {}; {then}) ──\n{}\n",
                    short_ts(&p.ts),
                    one_line(&p.error, 100),
                    sanitize(p.content.trim_end())
                ));
            }
            Record::Summary(s) => {
                out.push_str(&format!(
                    "\n── summary of turns 1–{} ──\n{}\n",
                    s.through_turn,
                    sanitize(s.content.trim_end())
                ));
            }
            Record::Round(x) => {
                if !x.text.trim().is_empty() {
                    out.push_str(&format!("\n{}\n", sanitize(x.text.trim_end())));
                }
                for c in &x.calls {
                    let result = x.results.iter().find(|r| r.id == c.id);
                    out.push_str(&format!(
                        "\n── tool {} {} → {} ──\n{}\n",
                        sanitize(&c.name),
                        one_line(&c.arguments, 100),
                        match result {
                            Some(r) if r.error => "error",
                            Some(_) => "ok",
                            None => "no result",
                        },
                        sanitize(result.map_or("", |r| r.content.trim_end()))
                    ));
                }
            }
            Record::Chat(_) | Record::Unknown(_) => {}
        }
    }
    output::print_stdout(&out)
}

#[derive(Serialize, Default)]
struct Stats {
    id: String,
    messages: usize,
    turns: u64,
    /// Estimated tokens of every message on disk.
    estimated_tokens: u64,
    /// Estimated tokens of what a full send would hold: system, latest summary, later messages.
    estimated_tokens_sent_in_full: u64,
    /// Token counts reported by providers, summed.
    usage_input: u64,
    usage_output: u64,
    /// Cost in US dollars, summed over the turns whose backend reported one (claude).
    #[serde(skip_serializing_if = "Option::is_none")]
    cost_usd: Option<f64>,
    /// Messages per model (the alias they were sent with).
    models: std::collections::BTreeMap<String, usize>,
    summaries: usize,
    /// Tool rounds (tool calling).
    rounds: usize,
    pending: usize,
    interrupted: usize,
}

impl Stats {
    fn add_usage(&mut self, u: &crate::chat::record::Usage) {
        self.usage_input = self.usage_input.saturating_add(u.input.unwrap_or(0));
        self.usage_output = self.usage_output.saturating_add(u.output.unwrap_or(0));
        if let Some(c) = u.cost_usd.filter(|c| c.is_finite() && *c >= 0.0) {
            *self.cost_usd.get_or_insert(0.0) += c;
        }
    }
}

/// `ai chat show ID --stats`.
/// `attached: photo.png (image/png, 1.2 MiB, sha256 3f2a…)`, with the kept copy's path, or
/// the final URL of a web page.
fn attachment_line(
    store: &crate::chat::store::Store,
    id: &str,
    a: &crate::chat::record::AttachmentRec,
) -> String {
    let mut line = format!(
        "attached: {} ({}, {}, sha256 {})",
        one_line(&a.name, 200),
        sanitize(&a.media_type),
        crate::fmt::human_size(a.size),
        a.sha256.get(..12).unwrap_or("?")
    );
    if let Some(url) = &a.url {
        line.push_str(&format!(" from {}", one_line(url, 400)));
    }
    if let Some(k) = &a.kept
        && let Some(p) = store.kept_path(id, k)
    {
        line.push_str(&format!(", kept as {}", p.display()));
    }
    line.push('\n');
    line
}

fn show_stats(header: &Header, records: &[Record], json: bool) -> Result<()> {
    use crate::chat::window::estimate;
    let through = header.summary.as_ref().map_or(0, |s| s.through_turn);
    let mut st = Stats {
        id: header.id.clone(),
        ..Stats::default()
    };
    let mut in_full =
        crate::compact::fixed_tokens(header.system.as_deref(), header.summary.as_ref());
    for r in records {
        match r {
            Record::Message(m) => {
                st.messages += 1;
                let est = estimate(&m.content) as u64;
                st.estimated_tokens += est;
                if m.turn.is_none_or(|t| t > through) {
                    in_full += est;
                }
                st.turns = st.turns.max(m.turn.unwrap_or(0));
                if let Some(u) = &m.usage {
                    st.add_usage(u);
                }
                if m.role == Role::Assistant {
                    let who = m
                        .origin
                        .alias
                        .clone()
                        .or_else(|| m.origin.model.clone())
                        .unwrap_or_else(|| "?".into());
                    *st.models.entry(sanitize(&who)).or_default() += 1;
                }
                st.interrupted += usize::from(m.interrupted);
            }
            Record::Round(x) => {
                st.rounds += 1;
                let [calls, results] = crate::chat::window::round(x);
                let est = (crate::chat::window::estimate_message(&calls)
                    + crate::chat::window::estimate_message(&results))
                    as u64;
                st.estimated_tokens += est;
                if x.turn > through {
                    in_full += est;
                }
                if let Some(u) = &x.usage {
                    st.add_usage(u);
                }
            }
            Record::Pending(_) => {}
            Record::Summary(_) => st.summaries += 1,
            Record::Chat(_) | Record::Unknown(_) => {}
        }
    }
    st.estimated_tokens_sent_in_full = in_full;
    st.pending = unanswered(records).len();
    if json {
        let mut text =
            serde_json::to_string_pretty(&st).map_err(|e| Error::backend(e.to_string()))?;
        text.push('\n');
        return output::print_stdout(&text);
    }
    let models: Vec<String> = st
        .models
        .iter()
        .map(|(m, n)| format!("{m} ({n})"))
        .collect();
    let text = format!(
        "chat {}\nmessages: {} in {} turns ({} interrupted, {} prompts waiting for retry)\n\
         estimated tokens: {} on disk, {} in a full send{}\n\
         provider-reported usage: {} in, {} out{}\nmodels: {}\n",
        st.id,
        st.messages,
        st.turns,
        st.interrupted,
        st.pending,
        st.estimated_tokens,
        st.estimated_tokens_sent_in_full,
        if st.summaries > 0 {
            format!(
                " (after {} summar{})",
                st.summaries,
                if st.summaries == 1 { "y" } else { "ies" }
            )
        } else {
            String::new()
        },
        st.usage_input,
        st.usage_output,
        match st.cost_usd {
            Some(c) if c.is_finite() => format!(", ${c:.4} reported cost"),
            _ => String::new(),
        },
        if models.is_empty() {
            "-".to_owned()
        } else {
            models.join(", ")
        },
    );
    output::print_stdout(&text)
}

fn short_ts(ts: &str) -> String {
    let clean = sanitize(ts);
    match chrono::DateTime::parse_from_rfc3339(&clean) {
        Ok(t) => t
            .with_timezone(&chrono::Local)
            .format("%Y-%m-%d %H:%M")
            .to_string(),
        Err(_) => clean,
    }
}

pub(crate) fn delete(ctx: &Ctx, ids: &[String], no_wait: bool) -> Result<()> {
    for id in ids {
        store::check_id(id)?;
    }
    let wait = if no_wait {
        Wait::No
    } else {
        Wait::UpTo(ctx.config.timeout)
    };
    let mut missing = Vec::new();
    for word in ids {
        match ctx.store.find(word) {
            Some(id) => {
                ctx.store.delete(&id, wait, &ctx.ui)?;
                ctx.ui.notice(&format!("ai: deleted chat {id}"));
            }
            None => missing.push(word.clone()),
        }
    }
    if missing.is_empty() {
        Ok(())
    } else {
        Err(Error::not_found(format!(
            "no chat {}",
            missing
                .iter()
                .map(|m| format!("'{m}'"))
                .collect::<Vec<_>>()
                .join(", ")
        ))
        .hint("`ai chat list` shows your chats"))
    }
}

pub(crate) fn rename(ctx: &Ctx, id: &str, title: &str) -> Result<()> {
    let id = existing(ctx, id)?;
    let title = title.trim();
    if title.is_empty() {
        return Err(Error::usage("the title is empty"));
    }
    let mut chat = ctx
        .store
        .open(&id, Wait::UpTo(ctx.config.timeout), Some(0), &ctx.ui)?;
    let mut header = chat.header.clone();
    header.title = Some(title.to_owned());
    chat.rewrite_header(header)?;
    ctx.ui.notice(&format!(
        "ai: chat {id} is now titled: {}",
        one_line(title, 80)
    ));
    Ok(())
}

pub(crate) fn gc(ctx: &Ctx, older_than: Duration, dry_run: bool) -> Result<()> {
    let cutoff = SystemTime::now()
        .checked_sub(older_than)
        .unwrap_or(SystemTime::UNIX_EPOCH);
    let mut removed = Vec::new();
    for (id, path, _) in ctx.store.entries()? {
        let Ok(meta) = path.symlink_metadata() else {
            continue;
        };
        if !meta.file_type().is_file() {
            ctx.ui.notice(&format!(
                "ai: skipped {}: not a regular file",
                path.display()
            ));
            continue;
        }
        let Ok(mtime) = meta.modified() else {
            continue;
        };
        if mtime >= cutoff {
            continue;
        }
        if dry_run {
            removed.push(id);
            continue;
        }
        match ctx.store.delete(&id, Wait::No, &ctx.ui) {
            Ok(()) => removed.push(id),
            Err(Error::Busy { .. }) => ctx.ui.notice(&format!("ai: skipped chat {id}: in use")),
            Err(e) => return Err(e),
        }
    }
    removed.sort();
    if !dry_run {
        let copies = ctx.store.remove_leftovers();
        if copies > 0 {
            ctx.ui.notice(&format!(
                "ai: removed {copies} leftover cop{} of chats from interrupted rewrites",
                if copies == 1 { "y" } else { "ies" }
            ));
        }
    }
    let verb = if dry_run { "would delete" } else { "deleted" };
    if !removed.is_empty() {
        output::print_stdout(&format!("{}\n", removed.join("\n")))?;
    }
    ctx.ui.notice(&format!(
        "ai: {verb} {} chat{}",
        removed.len(),
        if removed.len() == 1 { "" } else { "s" }
    ));
    Ok(())
}

pub(crate) fn new(
    ctx: &Ctx,
    model: Option<&str>,
    system: Option<&str>,
    name: Option<&str>,
) -> Result<()> {
    let label = match model {
        Some(word) => {
            let route = alias::resolve(word, &ctx.config)?
                .ok_or_else(|| alias::unknown(word, &ctx.config))?;
            Some(route.label)
        }
        None => None,
    };
    if let Some(n) = name {
        store::check_id(n)?;
        if ctx.store.find(n).is_some() {
            return Err(Error::usage(format!("chat '{n}' already exists")));
        }
        if crate::cli::is_reserved(n) {
            return Err(Error::usage(format!(
                "'{n}' cannot be a chat name (it is a command word)"
            )));
        }
    }
    let header = Header {
        v: record::VERSION,
        id: String::new(),
        created: record::now(),
        model: label,
        system: system
            .map(str::to_owned)
            .or_else(|| ctx.config.chat.system.clone()),
        title: None,
        summary: None,
        kb: Vec::new(),
        kb_tools: false,
    };
    let chat = ctx.store.create(name, header)?;
    // The new chat is the most recent one: `ai reply` continues it.
    let _ = crate::config::write_atomic_unsynced(
        &ctx.home.dir.join("last_chat"),
        format!("{}\n", chat.id).as_bytes(),
    );
    output::print_stdout(&format!("{}\n", chat.id))
}

/// `ai __complete chats`: `ID<TAB>title` lines, most recent first.
pub(crate) fn complete(ctx: &Ctx) -> Result<()> {
    let mut entries = listed_entries(ctx).unwrap_or_default();
    entries.truncate(200);
    let mut out = String::new();
    for (mtime, id, path, legacy) in entries {
        let row = read::row(&id, &path, legacy, mtime);
        let title = one_line(&row.title, 50);
        out.push_str(&format!("{id}\t{}\n", title.replace('\t', " ")));
    }
    output::print_stdout(&out)
}
