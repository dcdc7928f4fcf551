//! `ai usage [--since AGE] [--by model|provider|day] [--json]`.

use std::time::Duration;

use comfy_table::{CellAlignment, Table, presets};

use crate::cli::UsageBy;
use crate::ctx::Ctx;
use crate::error::{Error, Result};
use crate::output::{self, Ui};
use crate::usage::{self, By, Totals, dollars};

pub(crate) fn run(since: Option<Duration>, by: UsageBy, json: bool, ui: &Ui) -> Result<()> {
    let ctx = Ctx::load(ui.quiet)?;
    let since = match since {
        None => None,
        Some(age) => {
            let age = chrono::Duration::from_std(age).map_err(|_| {
                Error::usage("--since is too long").hint("use an age like 30d or 52w")
            })?;
            Some(
                chrono::Utc::now()
                    .checked_sub_signed(age)
                    .unwrap_or(chrono::DateTime::<chrono::Utc>::MIN_UTC),
            )
        }
    };
    let by = match by {
        UsageBy::Model => By::Model,
        UsageBy::Provider => By::Provider,
        UsageBy::Day => By::Day,
    };
    let report = usage::report(&ctx.store, since, by)?;
    if report.unreadable > 0 {
        ctx.ui.notice(&format!(
            "ai: {} chat file{} could not be read and {} not counted",
            report.unreadable,
            if report.unreadable == 1 { "" } else { "s" },
            if report.unreadable == 1 { "is" } else { "are" },
        ));
    }
    if json {
        let mut out =
            serde_json::to_string_pretty(&report).map_err(|e| Error::backend(e.to_string()))?;
        out.push('\n');
        return output::print_stdout(&out);
    }
    if report.rows.is_empty() {
        ctx.ui.notice(if report.since.is_some() {
            "ai: no replies in that time"
        } else {
            "ai: no replies yet"
        });
        return Ok(());
    }
    let mut table = Table::new();
    table.load_preset(presets::NOTHING);
    let head = match by {
        By::Model => "MODEL",
        By::Provider => "PROVIDER",
        By::Day => "DAY",
    };
    table.set_header(vec![head, "REPLIES", "INPUT", "OUTPUT", "COST"]);
    let mut any_estimate = false;
    let mut add = |key: &str, t: &Totals| {
        any_estimate |= t.tokens_estimated > 0 || t.cost_estimated_usd > 0.0;
        table.add_row(vec![
            output::sanitize(key),
            t.replies.to_string(),
            tokens(t.input_tokens, t.tokens_estimated > 0),
            tokens(t.output_tokens, t.tokens_estimated > 0),
            cost(t),
        ]);
    };
    for r in &report.rows {
        add(&r.key, &r.totals);
    }
    add("total", &report.total);
    for i in 1..5 {
        if let Some(c) = table.column_mut(i) {
            c.set_cell_alignment(CellAlignment::Right);
        }
    }
    let mut out = output::trim_lines(&table.to_string());
    out.push('\n');
    output::print_stdout(&out)?;
    if any_estimate {
        ctx.ui.notice(
            "ai: ~ marks estimates: tokens from the text where the backend reported none (4 characters a token), costs from the price table where it reported no cost",
        );
    }
    Ok(())
}

/// `12345` → `12.3k`; `~` when any of it was estimated.
fn tokens(n: u64, estimated: bool) -> String {
    let s = if n >= 1_000_000 {
        format!("{:.1}M", n as f64 / 1e6)
    } else if n >= 10_000 {
        format!("{:.1}k", n as f64 / 1e3)
    } else {
        n.to_string()
    };
    if estimated { format!("~{s}") } else { s }
}

fn cost(t: &Totals) -> String {
    let priced = t.replies - t.unpriced;
    if priced == 0 {
        return "unpriced".into();
    }
    let mut s = dollars(t.cost_usd);
    if t.cost_estimated_usd > 0.0 {
        s.insert(0, '~');
    }
    if t.unpriced > 0 {
        s.push_str(&format!(" +{} unpriced", t.unpriced));
    }
    s
}
