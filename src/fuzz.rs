//! Entry points for the fuzz targets in `fuzz/` (cargo fuzz): each feeds arbitrary input to
//! one reader and must never panic. Not an API.

use std::path::Path;

use crate::backend::http::{
    anthropic, bedrock, eventstream, gemini, ndjson, ollama, openai, provider, sse,
};
use crate::chat::{legacy, store};
use crate::cli::{self, Entry};
use crate::config::Config;

/// The argument grammar: the raw-argument pass, clap, and the positional words.
pub fn grammar(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let mut args: Vec<std::ffi::OsString> = vec!["ai".into()];
    args.extend(text.split('\0').map(Into::into));
    let literal = cli::words_after_dashdash(&args);
    let (args, hidden) = cli::protect_prompts(args);
    let args = cli::hoist_options(&<cli::Cli as clap::CommandFactory>::command(), args);
    if let Ok(parsed) = <cli::Cli as clap::Parser>::try_parse_from(&args) {
        let mut words = parsed.words;
        cli::restore(&mut words, &hidden);
        let config = Config::parse("fuzz.json".into(), r#"{"aliases":{"k7":["echo","x"]}}"#).ok();
        if let Some(config) = config {
            let find = |w: &str| {
                ["K7Q", "work"]
                    .iter()
                    .find(|c| c.eq_ignore_ascii_case(w))
                    .map(|c| (*c).to_owned())
            };
            for entry in [Entry::Top, Entry::Chat, Entry::Reply] {
                let from = words.len().saturating_sub(literal);
                let _ = cli::resolve_words(
                    entry,
                    &words,
                    from,
                    parsed.call.chat.as_deref(),
                    &config,
                    &find,
                );
            }
        }
    }
}

/// The chat record reader: whole files, tail reads, Python chats, Markdown exports.
pub fn chat_records(data: &[u8]) {
    let path = Path::new("fuzz.jsonl");
    let _ = store::parse(data, None, path);
    let _ = store::parse(data, Some(data.len() / 3), path);
    let text = String::from_utf8_lossy(data);
    let _ = legacy::parse("FUZ", &text, path);
    let _ = crate::commands::export::parse_markdown(&text);
}

/// The SSE reader and every protocol's event interpreter.
pub fn sse_events(data: &[u8]) {
    let mut reader = sse::Reader::new(data);
    let mut state = anthropic::State::default();
    let mut out = Vec::new();
    while let Ok(Some(ev)) = reader.next_event() {
        let _ = openai::event(&ev.data, &mut out);
        let _ = anthropic::event(&mut state, &ev.data, &mut out);
        let _ = gemini::event(&ev.data, &mut out);
        out.clear();
    }
    let _ = openai::whole(data);
    let _ = anthropic::whole(data);
    let _ = gemini::whole(data);
}

/// The AWS event-stream reader (Bedrock's ConverseStream) and Bedrock's interpreter.
pub fn eventstream(data: &[u8]) {
    let mut reader = eventstream::Reader::new(data);
    let mut out = Vec::new();
    while let Ok(Some(msg)) = reader.next_message() {
        let _ = bedrock::event(&msg, &mut out);
        out.clear();
    }
    let _ = bedrock::whole(data);
    let _ = bedrock::error_body(
        Some(&String::from_utf8_lossy(data)),
        &String::from_utf8_lossy(data),
    );
}

/// The NDJSON reader and Ollama's interpreter.
pub fn ndjson_lines(data: &[u8]) {
    let mut reader = ndjson::Reader::new(data);
    let mut out = Vec::new();
    while let Ok(Some(line)) = reader.next_line() {
        let _ = ollama::line(line, &mut out);
        out.clear();
    }
    let _ = ollama::whole(data);
}

/// Tool calls put together from streamed fragments: the SSE and NDJSON interpreters' pieces,
/// and arbitrary fragment sequences, through the assembler. Every call it gives has an ID of its
/// own and arguments that are not empty; nothing panics, nothing grows past the bounds.
pub fn tool_calls(data: &[u8]) {
    use crate::backend::http::{Piece, calls::Assembler, calls::CallPart};
    let check = |a: &mut Assembler| {
        let calls = a.finish();
        for (i, c) in calls.iter().enumerate() {
            assert!(!c.id.is_empty() && !c.arguments.is_empty());
            assert!(calls[..i].iter().all(|d| d.id != c.id), "duplicate call ID");
        }
    };
    let feed = |a: &mut Assembler, out: &mut Vec<Piece>| {
        for p in out.drain(..) {
            if let Piece::Call(part) = p {
                let _ = a.add(part);
            }
        }
    };
    // As streams of each protocol.
    let mut reader = sse::Reader::new(data);
    let mut state = anthropic::State::default();
    let (mut oa, mut an, mut gm) = (
        Assembler::default(),
        Assembler::default(),
        Assembler::default(),
    );
    let mut out = Vec::new();
    while let Ok(Some(ev)) = reader.next_event() {
        let _ = openai::event(&ev.data, &mut out);
        feed(&mut oa, &mut out);
        let _ = anthropic::event(&mut state, &ev.data, &mut out);
        feed(&mut an, &mut out);
        let _ = gemini::event(&ev.data, &mut out);
        feed(&mut gm, &mut out);
    }
    for a in [&mut oa, &mut an, &mut gm] {
        check(a);
    }
    let mut ol = Assembler::default();
    let mut lines = ndjson::Reader::new(data);
    while let Ok(Some(line)) = lines.next_line() {
        let _ = ollama::line(line, &mut out);
        feed(&mut ol, &mut out);
    }
    check(&mut ol);
    // As raw fragments: a control byte (index, which fields), then a piece of text.
    let mut a = Assembler::default();
    for chunk in data.chunks(9) {
        let Some((&ctl, rest)) = chunk.split_first() else {
            continue;
        };
        let text = String::from_utf8_lossy(rest).into_owned();
        let _ = a.add(CallPart {
            index: (ctl & 0x80 == 0).then_some(u64::from(ctl & 0x03)),
            id: (ctl & 0x10 != 0).then(|| text.clone()),
            name: (ctl & 0x20 != 0).then(|| text.clone()),
            arguments: (ctl & 0x40 != 0).then(|| text.clone()),
            signature: (ctl & 0x08 != 0).then(|| text.clone()),
        });
    }
    check(&mut a);
}

/// The config reader: config.json, its providers, `.env`.
pub fn config(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    if let Ok(config) = Config::parse("fuzz.json".into(), &text) {
        let _ = provider::configured(&config);
        let env = provider::Env::load(&config);
        for name in [
            "openai",
            "anthropic",
            "gemini-api",
            "ollama-api",
            "azure",
            "glm",
            "bedrock",
            "x",
        ] {
            let _ = provider::resolve(name, &config, &env);
        }
        let _ = crate::context::tokens(
            &crate::alias::Route {
                label: "fuzz".into(),
                provider: crate::alias::Provider::Echo,
                model: "fuzz".into(),
                effort: None,
            },
            &config,
        );
    }
    let _ = provider::parse_dotenv(&text);
}

/// The note reader: front matter, IDs, titles, link normalization. Lines stay where they were.
pub fn kb_note(data: &[u8]) {
    use crate::kb::{chunk::Kind, note};
    let text = String::from_utf8_lossy(data);
    let lines = |t: &str| t.split('\n').count();
    let unbommed = text.strip_prefix('\u{feff}').unwrap_or(&text);
    for kind in [Kind::Markdown, Kind::Text] {
        for rel in [
            "notes/01_12a_How_to_integrate_e0d27e3ad.md",
            "plain.md",
            "x",
        ] {
            let note = note::read(rel, &text, kind);
            assert!(note.first_line >= 1);
            let skipped = note.first_line as usize - 1;
            assert!(
                note.body.is_empty() || lines(&note.body) + skipped == lines(unbommed),
                "the body keeps its lines"
            );
            assert_eq!(note.hash, note::hash(&note.body));
            assert!(!note.id.is_empty() && !note.title.is_empty());
        }
    }
    let normalized = note::normalize_links(&text);
    assert_eq!(
        lines(&normalized),
        lines(&text),
        "normalizing keeps the lines"
    );
    let _ = note::zettel_id(&text);
}

/// The chunker, with its invariants: chunks in order, within the text's lines, none over the
/// budget, none empty, and together they hold all of the text but whitespace.
pub fn kb_chunk(data: &[u8]) {
    use crate::kb::chunk::{self, Kind};
    let text = String::from_utf8_lossy(data);
    let budget = data.first().map_or(1, |&b| usize::from(b % 64));
    for kind in [Kind::Markdown, Kind::Text] {
        let chunks = chunk::split(&text, 7, kind, budget);
        check_chunks(&text, 7, budget, &chunks);
    }
}

/// The chunker's invariants (see [`kb_chunk`]); also used by its unit tests.
pub(crate) fn check_chunks(
    body: &str,
    first_line: u32,
    budget: usize,
    chunks: &[crate::kb::chunk::Chunk],
) {
    let lines: Vec<&str> = body.split('\n').collect();
    let last = first_line as usize + lines.len() - 1;
    let mut previous_end = first_line as usize;
    let mut seen = 0;
    for c in chunks {
        let (start, end) = (c.start_line as usize, c.end_line as usize);
        assert!(!c.text.trim().is_empty(), "an empty chunk");
        assert!(
            crate::kb::chunk::estimate_tokens(&c.text) <= budget.max(1),
            "a chunk over the budget"
        );
        assert!(
            previous_end <= start && start <= end && end <= last,
            "lines out of order"
        );
        let span = lines[start - first_line as usize..=end - first_line as usize].join("\n");
        let exact = span
            .match_indices(c.text.as_str())
            .any(|(at, t)| !span[..at].contains('\n') && !span[at + t.len()..].contains('\n'));
        assert!(exact, "a chunk's text is not exactly on its lines");
        previous_end = end;
        seen += c.text.chars().filter(|ch| !ch.is_whitespace()).count();
    }
    let all = body.chars().filter(|ch| !ch.is_whitespace()).count();
    assert_eq!(seen, all, "chunks lost or repeated text");
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn tool_call_fragments_never_panic(data in proptest::collection::vec(any::<u8>(), 0..2048)) {
            super::tool_calls(&data);
        }

        /// Streams shaped like the real thing, split and interleaved at random.
        #[test]
        fn openai_fragments_in_any_split(args in "[a-z{}\":, 0-9]{0,40}", cut in 0usize..40, n in 1u64..4) {
            let cut = cut.min(args.len());
            let (a, b) = args.split_at(cut);
            let mut s = String::new();
            for i in 0..n {
                s.push_str(&format!(
                    "data: {{\"choices\":[{{\"delta\":{{\"tool_calls\":[{{\"index\":{i},\"id\":\"c{i}\",\"function\":{{\"name\":\"f\",\"arguments\":{}}}}}]}}}}]}}\n\n",
                    serde_json::to_string(a).unwrap()
                ));
            }
            for i in 0..n {
                s.push_str(&format!(
                    "data: {{\"choices\":[{{\"delta\":{{\"tool_calls\":[{{\"index\":{i},\"function\":{{\"arguments\":{}}}}}]}}}}]}}\n\n",
                    serde_json::to_string(b).unwrap()
                ));
            }
            s.push_str("data: [DONE]\n\n");
            super::tool_calls(s.as_bytes());
            // And the assembled arguments are exactly the pieces joined.
            let mut reader = crate::backend::http::sse::Reader::new(s.as_bytes());
            let mut asm = crate::backend::http::calls::Assembler::default();
            let mut out = Vec::new();
            while let Ok(Some(ev)) = reader.next_event() {
                crate::backend::http::openai::event(&ev.data, &mut out).unwrap();
            }
            for p in out {
                if let crate::backend::http::Piece::Call(part) = p {
                    asm.add(part).unwrap();
                }
            }
            let calls = asm.finish();
            prop_assert_eq!(calls.len() as u64, n);
            let want = if args.trim().is_empty() { "{}".to_owned() } else { args.clone() };
            for c in &calls {
                prop_assert_eq!(&c.arguments, &want);
            }
        }
    }
}
