//! `ai kb add | sync | list | stats | search | show | copy | remove`.

use comfy_table::{Table, presets};
use serde::Serialize;

use crate::cli::{KbAction, ModelAction};
use crate::config::kb::{BaseConfig, valid_name};
use crate::config::{Config, Home};
use crate::ctx::Ctx;
use crate::error::{Error, Result};
use crate::fmt::{human_size, one_line};
use crate::kb::{self, store, sync};
use crate::output::{self, sanitize};

pub(crate) fn run(action: KbAction, quiet: bool) -> Result<()> {
    let ctx = Ctx::load(quiet)?;
    match action {
        KbAction::Add {
            name,
            path,
            embed,
            dimensions,
            include,
            exclude,
            description,
            store,
            json,
        } => add(
            &ctx,
            &name,
            BaseConfig {
                path,
                embed,
                dimensions,
                include,
                exclude,
                description,
                task: None,
                store,
            },
            json,
        ),
        KbAction::Sync {
            names,
            full,
            json,
            watch,
        } => {
            sync_all(&ctx, &names, full, json)?;
            if watch {
                watch_all(&ctx, &names)
            } else {
                Ok(())
            }
        }
        KbAction::List { json } => list(&ctx, json),
        KbAction::Stats {
            name,
            skipped,
            json,
        } => {
            if skipped {
                stats_skipped(&ctx, &name, json)
            } else {
                stats(&ctx, &name, json)
            }
        }
        KbAction::Search {
            name,
            query,
            k,
            json,
            rerank,
        } => search(
            &ctx,
            &name,
            &query.join(" "),
            usize::from(k),
            json,
            rerank.as_deref(),
        ),
        KbAction::Show { name, id, json } => show(&ctx, &name, &id, json),
        KbAction::Copy {
            name,
            to,
            force,
            json,
        } => copy(&ctx, &name, &to, force, json),
        KbAction::Remove { name } => remove(&ctx, &name),
        KbAction::Model { action } => model(&ctx, action),
    }
}

/// `ai kb model pull | list | remove`: the local embedding models in `<home>/models/`.
fn model(ctx: &Ctx, action: ModelAction) -> Result<()> {
    use crate::kb::local::{Source, hub};
    let home = &ctx.home.dir;
    let source = |name: &str| -> Result<Source> {
        let s = Source::parse(name.strip_prefix("local:").unwrap_or(name))?;
        if matches!(s, Source::Folder(_)) {
            return Err(Error::usage(format!(
                "{name} is a folder; ai kb model works on models from the Hub"
            ))
            .hint("use a folder directly: ai kb add NAME DIR --embed local:/path/to/model"));
        }
        Ok(s)
    };
    match action {
        ModelAction::Pull { name } => {
            let s = source(&name)?;
            let dir = hub::pull(home, &s, &ctx.ui)?;
            // Checked as a model too: a repo of another kind is said now, not at the first sync.
            let m = crate::kb::local::LocalModel::load(&dir, &s.spec())?;
            ctx.ui.notice(&format!(
                "ai: {} is a {} model with {} dimensions; use it with: ai kb add NAME DIR --embed {}",
                s.spec(),
                m.family_name(),
                m.dims(),
                s.spec()
            ));
            Ok(())
        }
        ModelAction::Remove { name } => {
            let s = source(&name)?;
            if hub::remove(home, &s)? {
                ctx.ui.notice(&format!("ai: removed {}", s.spec()));
                Ok(())
            } else {
                Err(Error::not_found(format!("{} is not downloaded", s.spec()))
                    .hint("ai kb model list shows what is on disk"))
            }
        }
        ModelAction::List { json } => {
            let rows = hub::list(home);
            if json {
                return print_json(&rows);
            }
            let mut t = Table::new();
            t.load_preset(presets::NOTHING);
            t.set_header(vec![
                "NAME",
                "FAMILY",
                "DIMS",
                "SIZE",
                "ON DISK",
                "LANGUAGES",
            ]);
            for r in &rows {
                t.add_row(vec![
                    format!("{}{}", r.name, if r.default { " (default)" } else { "" }),
                    r.family.clone(),
                    r.dimensions.map(|d| d.to_string()).unwrap_or_default(),
                    crate::kb::local::human(r.size),
                    if r.downloaded { "yes" } else { "no" }.to_owned(),
                    r.languages.clone(),
                ]);
            }
            output::print_stdout(&format!("{t}\n"))
        }
    }
}

fn print_json(v: &impl Serialize) -> Result<()> {
    let mut text = serde_json::to_string_pretty(v)
        .map_err(|e| Error::backend(format!("cannot encode JSON: {e}")))?;
    text.push('\n');
    output::print_stdout(&text)
}

/// `base.path` is the folder as given; it is stored absolute.
fn add(ctx: &Ctx, name: &str, mut base: BaseConfig, json: bool) -> Result<()> {
    let path = base.path.clone();
    if !valid_name(name) {
        return Err(
            Error::usage(format!("'{name}' cannot name a knowledge base"))
                .hint("use letters, digits, - and _ (at most 64), starting with a letter or digit"),
        );
    }
    if let Some(existing) = ctx.config.kb.bases.get(name) {
        return Err(Error::usage(format!(
            "knowledge base {name} already exists ({})",
            existing.path.display()
        ))
        .hint(format!(
            "sync it with: ai kb sync {name}; or remove it first: ai kb remove {name}"
        )));
    }
    let abs = std::fs::canonicalize(&path).map_err(|e| {
        Error::not_found(format!(
            "cannot use {} as a notes folder: {e}",
            path.display()
        ))
        .hint("give the path of an existing folder")
    })?;
    if !abs.is_dir() {
        return Err(Error::usage(format!("{} is not a folder", path.display()))
            .hint("a knowledge base indexes a folder of notes"));
    }
    base.path = abs;
    // Everything that can be checked without the network is checked before anything is saved:
    // the store, the globs, the embedding provider and its key.
    store::server(name, &base)?;
    kb::scan::Filter::new(&base.include, &base.exclude)?;
    let embedder = kb::sync_embedder(&ctx.config, &base, &ctx.ui)?;
    // Saved as settled (`local` → `local:NAME`), so a later default does not change the base.
    if let Some(e) = &embedder
        && e.local()?.is_some()
    {
        base.embed = Some(e.spec().to_owned());
    }
    let home = ctx.home.clone();
    let (config, ()) = Config::update(&home, |config| {
        if config.kb.bases.contains_key(name) {
            return Err(Error::usage(format!(
                "knowledge base {name} already exists"
            )));
        }
        config.set_kb_base(name, Some(&base))
    })?;
    // A stale index of the same name (from a base removed by hand) is not trusted; a base on a
    // server is shared: joining it keeps what others indexed (notes match by their IDs).
    let on_server = store::server(name, &base)?.is_some();
    if !on_server {
        store::remove(&home, name)?;
    }
    ctx.ui.notice(&format!(
        "ai: knowledge base {name} added ({}{}); indexing it",
        base.path.display(),
        if on_server {
            format!(", index on {}", store::place(&home, name, &base))
        } else {
            String::new()
        }
    ));
    let counts = sync::run(&home, name, &base, embedder.as_ref(), !on_server, &ctx.ui).map_err(|e| {
        match e {
            Error::Interrupted => {
                ctx.ui.notice(&format!(
                    "ai: indexing stopped; continue it with: ai kb sync {name}"
                ));
                e
            }
            e => {
                output::print_error(&e);
                ctx.ui.notice(&format!(
                    "ai: knowledge base {name} is registered; fix the above, then run: ai kb sync {name}"
                ));
                Error::Exit(e.exit_code())
            }
        }
    })?;
    drop(config);
    report(ctx, name, &counts, json)
}

fn report(ctx: &Ctx, name: &str, counts: &sync::Counts, json: bool) -> Result<()> {
    if json {
        #[derive(Serialize)]
        struct Out<'a> {
            name: &'a str,
            #[serde(flatten)]
            counts: &'a sync::Counts,
        }
        return print_json(&Out { name, counts });
    }
    output::print_stdout(&format!("{name}: {}\n", counts.line()))?;
    skipped_notice(ctx, &counts.skipped);
    Ok(())
}

fn skipped_notice(ctx: &Ctx, s: &kb::scan::Skipped) {
    let total = s.total();
    if total == 0 {
        return;
    }
    let parts: Vec<String> = [
        (s.hidden, "hidden"),
        (s.ignored, "gitignored"),
        (s.excluded, "excluded"),
        (s.unsupported, "not text"),
        (s.large, "too large"),
        (s.links, "links not followed"),
        (s.binary, "binary"),
        (s.unreadable, "unreadable"),
        (s.duplicate, "duplicate ID"),
        (s.generated, "generated"),
        (s.no_text, "without text"),
    ]
    .iter()
    .filter(|(n, _)| *n > 0)
    .map(|(n, what)| format!("{n} {what}"))
    .collect();
    ctx.ui.notice(&format!("ai: skipped {}", parts.join(", ")));
}

/// `ai kb sync --watch`: sync the bases whose folders change, a moment after the last change
/// (so an editor's save, or a `git pull` of many files, is one sync), until Ctrl+C.
fn watch_all(ctx: &Ctx, names: &[String]) -> Result<()> {
    use notify::Watcher as _;
    use std::time::{Duration, Instant};
    /// Quiet time after the last change before a sync.
    const DEBOUNCE: Duration = Duration::from_millis(300);
    let names: Vec<String> = if names.is_empty() {
        ctx.config.kb.bases.keys().cloned().collect()
    } else {
        names.to_vec()
    };
    // Ctrl+C ends the watch (and a sync under way at its next note), not the process at once.
    let _defer = crate::signal::Defer::start();
    let (tx, rx) = std::sync::mpsc::channel::<notify::Result<notify::Event>>();
    let mut watcher = notify::recommended_watcher(tx)
        .map_err(|e| Error::backend(format!("cannot watch for changes: {e}")))?;
    let mut roots: Vec<(String, std::path::PathBuf)> = Vec::new();
    for name in &names {
        let base = kb::base(&ctx.config, name)?;
        let root = std::fs::canonicalize(&base.path).unwrap_or_else(|_| base.path.clone());
        watcher
            .watch(&root, notify::RecursiveMode::Recursive)
            .map_err(|e| {
                Error::backend(format!("cannot watch {}: {e}", root.display()))
                    .hint("on Linux, raise fs.inotify.max_user_watches (sysctl) for large folders")
            })?;
        roots.push((name.clone(), root));
    }
    ctx.ui.notice(&format!(
        "ai: watching {} for changes (Ctrl+C ends)",
        names.join(", ")
    ));
    // The bases with changes not yet synced, and when the last change came.
    let mut pending: Vec<String> = Vec::new();
    let mut last = Instant::now();
    loop {
        if crate::signal::interrupted() {
            break;
        }
        match rx.recv_timeout(Duration::from_millis(100)) {
            Ok(Ok(event)) => {
                if matches!(event.kind, notify::EventKind::Access(_)) {
                    continue;
                }
                for (name, root) in &roots {
                    let inside = event.paths.iter().any(|p| {
                        p.starts_with(root)
                            && !p
                                .strip_prefix(root)
                                .ok()
                                .and_then(|r| r.components().next())
                                .is_some_and(|c| c.as_os_str().to_string_lossy().starts_with('.'))
                    });
                    if inside && !pending.contains(name) {
                        pending.push(name.clone());
                    }
                }
                last = Instant::now();
            }
            Ok(Err(e)) => ctx.ui.warn(&format!("watching: {e}")),
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {}
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => break,
        }
        if pending.is_empty() || last.elapsed() < DEBOUNCE {
            continue;
        }
        for name in std::mem::take(&mut pending) {
            let base = kb::base(&ctx.config, &name)?;
            let result = kb::sync_embedder(&ctx.config, base, &ctx.ui)
                .and_then(|e| sync::run(&ctx.home, &name, base, e.as_ref(), false, &ctx.ui));
            match result {
                Ok(counts) => report(ctx, &name, &counts, false)?,
                Err(Error::Interrupted) => break,
                // The folder itself is gone: its watch went with it, so nothing more would be
                // seen (a folder made again in its place is not watched). Say so and end.
                Err(e) if roots.iter().any(|(n, r)| *n == name && !r.is_dir()) => {
                    drop(watcher);
                    ctx.ui.notice("ai: stopped watching");
                    return Err(e);
                }
                // Another sync is at it; the next change (or this one's end) brings it here.
                Err(e) => output::print_error(&e),
            }
        }
    }
    drop(watcher);
    ctx.ui.notice("ai: stopped watching");
    Ok(())
}

fn sync_all(ctx: &Ctx, names: &[String], full: bool, json: bool) -> Result<()> {
    let names: Vec<String> = if names.is_empty() {
        ctx.config.kb.bases.keys().cloned().collect()
    } else {
        for n in names {
            kb::base(&ctx.config, n)?;
        }
        names.to_vec()
    };
    if names.is_empty() {
        ctx.ui
            .notice("ai: no knowledge bases yet (add one: ai kb add notes ~/notes)");
        return Ok(());
    }
    let mut all = Vec::new();
    let mut failed: Option<Error> = None;
    for name in &names {
        let base = kb::base(&ctx.config, name)?;
        let result = kb::sync_embedder(&ctx.config, base, &ctx.ui)
            .and_then(|e| sync::run(&ctx.home, name, base, e.as_ref(), full, &ctx.ui));
        match result {
            Ok(counts) => {
                if !json {
                    report(ctx, name, &counts, false)?;
                }
                all.push((name.clone(), counts));
            }
            Err(Error::Interrupted) => {
                ctx.ui.notice(&format!(
                    "ai: sync of {name} stopped; what was done is kept; run it again to continue"
                ));
                return Err(Error::Interrupted);
            }
            Err(e) if names.len() == 1 => return Err(e),
            Err(e) => {
                output::print_error(&e);
                failed = Some(e);
            }
        }
    }
    if json {
        #[derive(Serialize)]
        struct Out<'a> {
            name: &'a str,
            #[serde(flatten)]
            counts: &'a sync::Counts,
        }
        let out: Vec<Out<'_>> = all
            .iter()
            .map(|(name, counts)| Out { name, counts })
            .collect();
        print_json(&out)?;
    }
    match failed {
        Some(e) => Err(Error::Exit(e.exit_code())),
        None => Ok(()),
    }
}

#[derive(Serialize)]
struct Stats {
    name: String,
    path: String,
    /// Where the index lives: its file, or its server (without a password).
    store: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    description: Option<String>,
    indexed: bool,
    notes: u64,
    chunks: u64,
    embedded: u64,
    disk_bytes: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    embed: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    dimensions: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    last_sync: Option<String>,
    /// Why its index could not be read (`kb list`: a server that cannot be reached).
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<String>,
}

/// What the config says of base `name`, before its index is read.
fn unread_stats(home: &Home, name: &str, base: &BaseConfig) -> Stats {
    Stats {
        name: name.to_owned(),
        path: base.path.display().to_string(),
        store: store::place(home, name, base),
        description: base.description.clone(),
        indexed: false,
        notes: 0,
        chunks: 0,
        embedded: 0,
        disk_bytes: 0,
        embed: base.embed.clone(),
        dimensions: base.dimensions,
        last_sync: None,
        error: None,
    }
}

fn stats_of(home: &Home, name: &str, base: &BaseConfig) -> Result<Stats> {
    let mut s = unread_stats(home, name, base);
    if !store::exists(home, name, base) {
        return Ok(s);
    }
    let ix = match store::Index::open_base(home, name, base, false) {
        // A base on a server whose first sync has not made its tables (yet).
        Err(Error::NotFound { .. }) => return Ok(s),
        ix => ix?,
    };
    s.indexed = true;
    s.notes = ix.notes()?;
    s.chunks = ix.passages()?;
    s.embedded = ix.embedded()?;
    s.disk_bytes = ix.disk_bytes();
    s.embed = ix.meta("embed")?.or(s.embed);
    s.dimensions = ix
        .meta("dimensions")?
        .and_then(|d| d.parse().ok())
        .or(s.dimensions);
    s.last_sync = ix.meta("last_sync")?;
    Ok(s)
}

/// `NAME.sqlite` indexes in the kb folder whose base is not in config (sorted).
fn orphan_indexes(ctx: &Ctx) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(crate::kb::store::dir(&ctx.home)) else {
        return Vec::new();
    };
    let mut out: Vec<String> = entries
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            let name = e.file_name().to_str()?.strip_suffix(".sqlite")?.to_owned();
            // (`NAME.rebuild.sqlite`, `NAME.copy.sqlite`: a rebuild's or a copy's, not a base's)
            (valid_name(&name) && !ctx.config.kb.bases.contains_key(&name))
                .then(|| format!("{}.sqlite", output::sanitize(&name)))
        })
        .collect();
    out.sort();
    out
}

fn list(ctx: &Ctx, json: bool) -> Result<()> {
    let mut rows = Vec::new();
    // A base whose index cannot be read (its server down) is listed with why, and the others
    // as they are; the exit code then says the first failure.
    let mut failed: Option<Error> = None;
    for (name, base) in &ctx.config.kb.bases {
        match stats_of(&ctx.home, name, base) {
            Ok(s) => rows.push(s),
            Err(Error::Interrupted) => return Err(Error::Interrupted),
            Err(e) => {
                output::print_error(&e);
                rows.push(Stats {
                    error: Some(e.to_string()),
                    ..unread_stats(&ctx.home, name, base)
                });
                failed.get_or_insert(e);
            }
        }
    }
    // Indexes left without their config entry: the Python ai-cli rewrites config.json with
    // its own keys only (`ai.py default`, `ai.py init`), which drops "kb" (I3-9).
    let orphans = orphan_indexes(ctx);
    if !orphans.is_empty() {
        ctx.ui.notice(&format!(
            "ai: {} in {} but not in config.json (the Python ai-cli rewrites config.json without ai's keys); take each back with: ai kb add NAME FOLDER",
            orphans.join(", "),
            crate::kb::store::dir(&ctx.home).display()
        ));
    }
    let done = |printed: Result<()>| match failed {
        Some(e) => printed.and(Err(Error::Exit(e.exit_code()))),
        None => printed,
    };
    if json {
        return done(print_json(&rows));
    }
    if rows.is_empty() {
        ctx.ui
            .notice("ai: no knowledge bases yet (add one: ai kb add notes ~/notes)");
        return Ok(());
    }
    let mut table = Table::new();
    table.load_preset(presets::NOTHING);
    table.set_header(vec!["NAME", "NOTES", "SEARCH", "LAST SYNC", "FOLDER"]);
    for r in &rows {
        table.add_row(vec![
            r.name.clone(),
            if r.indexed {
                r.notes.to_string()
            } else if r.error.is_some() {
                "?".into()
            } else {
                "-".into()
            },
            r.embed.as_deref().map_or_else(
                || "keywords".into(),
                |e| format!("keywords + {}", sanitize(e)),
            ),
            r.last_sync
                .as_deref()
                .map_or_else(|| "never".into(), short_time),
            if r.store.contains("://") {
                format!("{} (index on {})", sanitize(&r.path), sanitize(&r.store))
            } else {
                sanitize(&r.path)
            },
        ]);
    }
    let mut out = output::trim_lines(&table.to_string());
    out.push('\n');
    if ctx.config.kb.default.is_some() {
        ctx.ui.notice(&format!(
            "ai: every call is grounded in {} (config \"kb.default\"; --no-kb turns it off)",
            ctx.config.kb.default.as_deref().unwrap_or_default()
        ));
    }
    done(output::print_stdout(&out))
}

fn short_time(rfc3339: &str) -> String {
    chrono::DateTime::parse_from_rfc3339(rfc3339)
        .map(|t| {
            t.with_timezone(&chrono::Local)
                .format("%Y-%m-%d %H:%M")
                .to_string()
        })
        .unwrap_or_else(|_| rfc3339.to_owned())
}

/// `ai kb stats NAME --skipped`: what a walk of the folder leaves out now, by reason, and the
/// generated notes by path.
fn stats_skipped(ctx: &Ctx, name: &str, json: bool) -> Result<()> {
    let base = kb::base(&ctx.config, name)?;
    let filter = kb::scan::Filter::new(&base.include, &base.exclude)?;
    let (_, mut s) = kb::scan::scan(&base.path, &filter)?;
    // Documents without text are known from the last sync (the walk reads no file).
    if store::exists(&ctx.home, name, base) {
        let ix = store::Index::open_base(&ctx.home, name, base, false)?;
        s.no_text_paths = ix
            .unread()?
            .into_iter()
            .map(|(path, _, _, why)| (path, why))
            .collect();
        s.no_text = s.no_text_paths.len() as u64;
    }
    if json {
        #[derive(Serialize)]
        struct NoText<'a> {
            path: &'a str,
            reason: &'a str,
        }
        #[derive(Serialize)]
        struct Out<'a> {
            #[serde(flatten)]
            counts: &'a kb::scan::Skipped,
            generated_files: &'a [String],
            no_text_files: Vec<NoText<'a>>,
        }
        return print_json(&Out {
            counts: &s,
            generated_files: &s.generated_paths,
            no_text_files: s
                .no_text_paths
                .iter()
                .map(|(path, reason)| NoText { path, reason })
                .collect(),
        });
    }
    let mut out = String::new();
    for (n, what) in [
        (s.hidden, "hidden"),
        (s.ignored, "gitignored"),
        (s.excluded, "excluded"),
        (s.unsupported, "not text"),
        (s.large, "too large"),
        (s.links, "links not followed"),
        (s.unreadable, "unreadable"),
        (s.generated, "generated"),
        (s.no_text, "without text"),
    ] {
        out.push_str(&format!("{what:<20}{n}\n"));
    }
    for p in &s.generated_paths {
        out.push_str(&format!("generated           {}\n", sanitize(p)));
    }
    for (p, why) in &s.no_text_paths {
        out.push_str(&format!("without text        {} ({why})\n", sanitize(p)));
    }
    output::print_stdout(&out)
}

fn stats(ctx: &Ctx, name: &str, json: bool) -> Result<()> {
    let base = kb::base(&ctx.config, name)?;
    let s = stats_of(&ctx.home, name, base)?;
    if json {
        return print_json(&s);
    }
    let mut out = String::new();
    out.push_str(&format!("name          {}\n", s.name));
    out.push_str(&format!("folder        {}\n", sanitize(&s.path)));
    if let Some(d) = &s.description {
        out.push_str(&format!("description   {}\n", one_line(d, 100)));
    }
    if !s.indexed {
        out.push_str("index         none yet\n");
        output::print_stdout(&out)?;
        ctx.ui
            .notice(&format!("ai: build it with: ai kb sync {name}"));
        return Ok(());
    }
    out.push_str(&format!("notes         {}\n", s.notes));
    out.push_str(&format!("passages      {}\n", s.chunks));
    out.push_str(&format!("size on disk  {}\n", human_size(s.disk_bytes)));
    match (&s.embed, s.dimensions) {
        (Some(e), Some(d)) => out.push_str(&format!(
            "embeddings    {} ({d} dimensions, {} of {} passages)\n",
            sanitize(e),
            s.embedded,
            s.chunks
        )),
        (Some(e), None) => out.push_str(&format!("embeddings    {} (none yet)\n", sanitize(e))),
        _ => out.push_str("embeddings    none (keyword search)\n"),
    }
    out.push_str(&format!(
        "last sync     {}\n",
        s.last_sync
            .as_deref()
            .map_or_else(|| "never".into(), short_time)
    ));
    output::print_stdout(&out)
}

fn search(
    ctx: &Ctx,
    name: &str,
    query: &str,
    k: usize,
    json: bool,
    rerank: Option<&str>,
) -> Result<()> {
    if query.trim().is_empty() {
        return Err(Error::usage("the query is empty")
            .hint(format!("ai kb search {name} \"what you look for\"")));
    }
    crate::kb::base(&ctx.config, name)?;
    let reranker = crate::kb::reranker(rerank, &ctx.home, &ctx.config, &ctx.ui)?;
    let deadline = std::time::Instant::now().checked_add(ctx.config.timeout);
    let hits = crate::kb::retrieve(
        &ctx.home,
        &ctx.config,
        &[name.to_owned()],
        query,
        k,
        reranker.as_ref(),
        deadline,
        &ctx.ui,
    )?;
    if json {
        return print_json(&hits);
    }
    if hits.is_empty() {
        ctx.ui
            .notice(&format!("ai: nothing in {name} matches that"));
        return Ok(());
    }
    let mut out = String::new();
    for (i, h) in hits.iter().enumerate() {
        out.push_str(&format!(
            "[{}] {}  {}{}  ({:.2})\n    {}:{}-{}{}\n",
            i + 1,
            h.id,
            h.ordering
                .as_deref()
                .map(|o| format!("{o} "))
                .unwrap_or_default(),
            one_line(&h.title, 80),
            h.score,
            h.path,
            h.lines[0],
            h.lines[1],
            if h.heading.is_empty() {
                String::new()
            } else {
                format!(" · {}", one_line(&h.heading, 80))
            }
        ));
        for line in h.passage.lines().filter(|l| !l.trim().is_empty()).take(6) {
            out.push_str(&format!("    {}\n", one_line(line, 120)));
        }
        out.push('\n');
    }
    output::print_foreign(out.trim_end_matches('\n'))?;
    output::print_stdout("\n")
}

fn show(ctx: &Ctx, name: &str, id: &str, json: bool) -> Result<()> {
    let base = kb::base(&ctx.config, name)?;
    let ix = store::Index::open_base(&ctx.home, name, base, false)?;
    // An ID or path, else a name as a `[[wikilink]]` gives it (file name, title).
    let note = ix.find_note(id)?.ok_or_else(|| {
        Error::not_found(format!("knowledge base {name} has no note {id}"))
            .hint(format!("find one with: ai kb search {name} \"…\""))
    })?;
    let linked_from = ix.linked_from(&note)?;
    let links = ix.links(&note.id)?;
    let kb::linked::Linked {
        id,
        title,
        ordering,
        path,
    } = note;
    let file = base.path.join(&path);
    // As the sync reads it: a regular file inside the folder, not too large (a note swapped
    // for a link to /etc/passwd, /dev/zero or a FIFO is refused, not read or waited on).
    let kind = kb::scan::kind_of(&path);
    let max = kind.map_or(kb::scan::MAX_FILE_BYTES, kb::scan::max_bytes);
    let bytes = kb::scan::read_file(Some(&base.path), &file, max).map_err(|e| {
        let e = Error::not_found(format!(
            "note {id} of {name} is indexed but its file cannot be read ({}): {e}",
            file.display()
        ));
        if base.path.is_dir() {
            e.hint(format!(
                "bring the index up to date with: ai kb sync {name}"
            ))
        } else {
            e.hint(format!(
                "the folder {} is gone: restore it, or: ai kb remove {name}",
                base.path.display()
            ))
        }
    })?;
    // Read as the index reads it: UTF-8, else each odd byte as Windows-1252; an HTML page or a
    // PDF as the text it was indexed as.
    let text = match kind {
        Some(kb::chunk::Kind::Pdf) => {
            kb::document::pdf(&bytes)
                .map_err(|why| {
                    Error::not_found(format!(
                        "note {id} of {name} is indexed but its PDF gives no text now: {}",
                        why.reason()
                    ))
                    .hint(format!(
                        "bring the index up to date with: ai kb sync {name}"
                    ))
                })?
                .1
        }
        Some(kb::chunk::Kind::Html) => kb::document::html(&kb::scan::decode(&bytes)).1,
        _ => kb::scan::decode(&bytes).into_owned(),
    };
    if json {
        #[derive(Serialize)]
        struct Note<'a> {
            kb: &'a str,
            id: &'a str,
            title: &'a str,
            #[serde(skip_serializing_if = "Option::is_none")]
            ordering: Option<&'a str>,
            path: &'a str,
            text: &'a str,
            /// Its links to other notes, each with the note it reaches (`null`: unresolved).
            links: &'a [kb::linked::Link],
            /// The notes that link to this one.
            linked_from: &'a [kb::linked::Linked],
        }
        return print_json(&Note {
            kb: name,
            id: &id,
            title: &title,
            ordering: ordering.as_deref(),
            path: &path,
            text: &text,
            links: &links,
            linked_from: &linked_from,
        });
    }
    ctx.ui.notice(&format!(
        "ai: {} · {}{} · {}",
        id,
        ordering.map(|o| format!("{o} ")).unwrap_or_default(),
        one_line(&title, 80),
        file.display()
    ));
    output::print_foreign(&text)?;
    if !text.ends_with('\n') {
        output::print_stdout("\n")?;
    }
    // The note's text is stdout; its links, resolved, are told beside it.
    let name_of = |l: &kb::linked::Linked| format!("{} ({})", one_line(&l.title, 60), l.id);
    let mut shown: Vec<String> = Vec::new();
    for l in &links {
        let s = match &l.note {
            Some(n) => name_of(n),
            None => format!("{} (no such note)", one_line(&l.name, 60)),
        };
        if !shown.contains(&s) {
            shown.push(s);
        }
    }
    if !shown.is_empty() {
        ctx.ui
            .notice(&format!("ai: links to: {}", shown.join(" · ")));
    }
    if !linked_from.is_empty() {
        let from: Vec<String> = linked_from.iter().map(name_of).collect();
        ctx.ui
            .notice(&format!("ai: linked from: {}", from.join(" · ")));
    }
    Ok(())
}

fn copy(ctx: &Ctx, name: &str, to: &str, force: bool, json: bool) -> Result<()> {
    let copied =
        kb::copy::run(&ctx.home, &ctx.config, name, to, force, &ctx.ui).inspect_err(|e| {
            if matches!(e, Error::Interrupted) {
                ctx.ui.notice(&format!(
                    "ai: copy of {name} stopped; nothing was changed, {name} is where it was"
                ));
            }
        })?;
    if json {
        #[derive(Serialize)]
        struct Out<'a> {
            name: &'a str,
            store: String,
            #[serde(flatten)]
            copied: &'a kb::copy::Copied,
        }
        let config = Config::load(&ctx.home)?;
        let store = store::place(&ctx.home, name, kb::base(&config, name)?);
        return print_json(&Out {
            name,
            store,
            copied: &copied,
        });
    }
    Ok(())
}

fn remove(ctx: &Ctx, name: &str) -> Result<()> {
    let base = kb::base(&ctx.config, name)?.clone();
    // Not while a sync writes it.
    let lock = sync::lock(&ctx.home, name)?;
    Config::update(&ctx.home, |config| config.set_kb_base(name, None))?;
    store::remove(&ctx.home, name)?;
    drop(lock);
    let _ = std::fs::remove_file(store::dir(&ctx.home).join(format!(".{name}.lock")));
    ctx.ui.notice(&format!(
        "ai: knowledge base {name} removed; its notes in {} are untouched",
        base.path.display()
    ));
    if ctx.config.kb.default.as_deref() == Some(name) {
        ctx.ui.warn(&format!(
            "config \"kb.default\" still names {name}: remove it, or calls will fail"
        ));
    }
    Ok(())
}
