//! Making foreign text (model replies, chat files, backend errors) safe to show on a terminal.
//!
//! The rules, the same everywhere:
//! - Terminal control sequences are dropped whole: CSI (`ESC [`… final byte, which includes every
//!   SGR colour: a model has no business colouring the terminal, and SGR 8 conceals text), OSC
//!   (titles, OSC 8 links, OSC 52 clipboard writes), DCS, APC, PM and SOS strings, and two-byte
//!   escapes.
//! - Other control characters (C0 but newline and tab, DEL, C1 such as U+009B) are dropped; so a
//!   carriage return cannot overwrite a line that was shown.
//! - Invisible format characters — bidi controls (U+202A–U+202E, U+2066–U+2069, U+200E/F,
//!   U+061C), zero-width characters, tags (U+E0000 block), all of Unicode's Cf category, the
//!   line and paragraph separators, the Hangul fillers and the variation selectors — are
//!   *shown*, as `\u{202e}`: dropping them would hide that the text held them, and keeping them
//!   lets text read differently from what it is. The one exception is a zero-width joiner or
//!   an emoji presentation selector right after a non-ASCII character, which join emoji (👩‍💻,
//!   ❤️) and cannot disguise ASCII text.
//! - A control string (OSC, DCS, …) that is not terminated by the end of its line or within
//!   4096 characters ends there, and the text after it is shown.
//!
//! [`Cleaner`] keeps its state between pieces, so a stream can be cleaned chunk by chunk even when
//! an escape sequence or a UTF-8 character is split across chunks.

/// Is `c` an invisible format character (Unicode category Cf, as of Unicode 16), a line or
/// paragraph separator, or a Hangul filler (letters that render as nothing)?
pub(crate) fn is_invisible(c: char) -> bool {
    matches!(c,
        '\u{ad}'
        | '\u{600}'..='\u{605}'
        | '\u{61c}'
        | '\u{6dd}'
        | '\u{70f}'
        | '\u{890}'..='\u{891}'
        | '\u{8e2}'
        | '\u{180e}'
        | '\u{200b}'..='\u{200f}'
        | '\u{2028}'..='\u{202e}'
        | '\u{2060}'..='\u{2064}'
        | '\u{2066}'..='\u{206f}'
        | '\u{feff}'
        | '\u{fff9}'..='\u{fffb}'
        | '\u{110bd}'
        | '\u{110cd}'
        | '\u{13430}'..='\u{1343f}'
        | '\u{1bca0}'..='\u{1bca3}'
        | '\u{1d173}'..='\u{1d17a}'
        | '\u{e0001}'
        | '\u{e0020}'..='\u{e007f}'
        | '\u{115f}'..='\u{1160}'
        | '\u{3164}'
        | '\u{ffa0}'
        // Variation selectors (category Mn, but invisible, and a common way to smuggle text).
        | '\u{fe00}'..='\u{fe0f}'
        | '\u{e0100}'..='\u{e01ef}')
}

/// Invisible characters that are kept right after a non-ASCII character, where they serve
/// emoji and scripts: the zero-width joiner (👩‍💻) and the text/emoji presentation selectors.
fn joins(c: char) -> bool {
    matches!(c, '\u{200d}' | '\u{fe0e}' | '\u{fe0f}')
}

/// `\u{202e}`: how an invisible character is shown.
fn visible(c: char, out: &mut String) {
    out.push_str(&format!("\\u{{{:x}}}", u32::from(c)));
}

/// Where the cleaner is inside an escape sequence.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Text,
    /// After ESC.
    Escape,
    /// Inside `ESC [` …, until a final byte.
    Csi,
    /// Inside an OSC, DCS, APC, PM or SOS string, until BEL or ST.
    String,
    /// ESC inside such a string: `\` ends it (ST), anything else starts a new escape.
    StringEscape,
}

/// Cleans text for a terminal, piece by piece (see the module documentation for the rules).
#[derive(Debug)]
pub(crate) struct Cleaner {
    state: State,
    /// The start of a UTF-8 character split across pieces (at most 3 bytes).
    partial: Vec<u8>,
    /// The last character shown was non-ASCII (a zero-width joiner after it is kept).
    after_wide: bool,
    /// Characters inside the current OSC/DCS/… string.
    in_string: usize,
}

/// An OSC/DCS/… string longer than this, or one that reaches a newline, was never going to be
/// terminated: what follows is shown as text again, so an unterminated string cannot hide the
/// rest of a reply.
const MAX_STRING: usize = 4096;

impl Cleaner {
    pub(crate) fn new() -> Cleaner {
        Cleaner {
            state: State::Text,
            partial: Vec::new(),
            after_wide: false,
            in_string: 0,
        }
    }

    /// Clean the next piece of a byte stream into `out`. Invalid UTF-8 becomes U+FFFD.
    pub(crate) fn push_bytes(&mut self, bytes: &[u8], out: &mut String) {
        let joined;
        let mut rest: &[u8] = if self.partial.is_empty() {
            bytes
        } else {
            joined = [std::mem::take(&mut self.partial).as_slice(), bytes].concat();
            &joined
        };
        loop {
            match std::str::from_utf8(rest) {
                Ok(text) => {
                    self.push_str(text, out);
                    return;
                }
                Err(e) => {
                    let (good, bad) = rest.split_at(e.valid_up_to());
                    // The prefix was just checked, so this cannot fail.
                    self.push_str(std::str::from_utf8(good).unwrap_or_default(), out);
                    match e.error_len() {
                        // Cut off at the end: the rest comes with the next piece.
                        None => {
                            self.partial = bad.to_vec();
                            return;
                        }
                        Some(n) => {
                            self.push_char(char::REPLACEMENT_CHARACTER, out);
                            rest = &bad[n..];
                        }
                    }
                }
            }
        }
    }

    /// Clean the next piece of text into `out`.
    pub(crate) fn push_str(&mut self, text: &str, out: &mut String) {
        for c in text.chars() {
            self.push_char(c, out);
        }
    }

    /// The end of the text: a character cut short is shown as U+FFFD; an unfinished escape
    /// sequence is dropped.
    pub(crate) fn finish(&mut self, out: &mut String) {
        if !std::mem::take(&mut self.partial).is_empty() && self.state == State::Text {
            out.push(char::REPLACEMENT_CHARACTER);
        }
        self.state = State::Text;
    }

    fn push_char(&mut self, c: char, out: &mut String) {
        match self.state {
            State::Text => self.text(c, out),
            State::Escape => {
                self.state = match c {
                    '[' => State::Csi,
                    ']' | 'P' | '_' | '^' | 'X' => {
                        self.in_string = 0;
                        State::String
                    }
                    // A two-character escape (ESC c, ESC 7, …): dropped with its ESC.
                    _ => State::Text,
                }
            }
            State::Csi => {
                if ('@'..='~').contains(&c) {
                    self.state = State::Text;
                } else if !(' '..='?').contains(&c) {
                    // Not a parameter or intermediate byte: no sequence after all; keep the
                    // character rather than swallow the text after a stray `ESC [`.
                    self.state = State::Text;
                    self.text(c, out);
                }
            }
            State::String => match c {
                '\x07' | '\u{9c}' => self.state = State::Text,
                '\x1b' => self.state = State::StringEscape,
                '\n' => {
                    self.state = State::Text;
                    self.text(c, out);
                }
                _ => {
                    self.in_string += 1;
                    if self.in_string > MAX_STRING {
                        self.state = State::Text;
                    }
                }
            },
            State::StringEscape => {
                if c == '\\' {
                    self.state = State::Text;
                } else {
                    self.state = State::Escape;
                    self.push_char(c, out);
                }
            }
        }
    }

    fn text(&mut self, c: char, out: &mut String) {
        match c {
            '\x1b' => self.state = State::Escape,
            '\n' | '\t' => {
                out.push(c);
                self.after_wide = false;
            }
            c if c.is_control() => {}
            // One joiner or selector after a non-ASCII character; a run of them could carry
            // hidden bits, so the next is shown.
            c if joins(c) && self.after_wide => {
                out.push(c);
                self.after_wide = false;
            }
            c if is_invisible(c) => {
                visible(c, out);
                self.after_wide = false;
            }
            c => {
                out.push(c);
                self.after_wide = !c.is_ascii();
            }
        }
    }
}

/// Clean a whole text for a terminal.
pub(crate) fn sanitize(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut cleaner = Cleaner::new();
    cleaner.push_str(text, &mut out);
    cleaner.finish(&mut out);
    out
}

/// Does `text` hold anything a terminal would not show as it is: a control character other
/// than newline and tab, or an invisible format character (zero-width joiners included)?
pub(crate) fn has_hidden(text: &str) -> bool {
    text.chars()
        .any(|c| (c.is_control() && c != '\n' && c != '\t') || is_invisible(c) || joins(c))
}

/// Every character of `text` that a terminal would not show as it is, spelled out (`\e`, `\r`,
/// `\x07`, `\u{202e}`); newlines and tabs stay. For showing a command that is refused.
pub(crate) fn spell_out(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '\n' | '\t' => out.push(c),
            '\x1b' => out.push_str("\\e"),
            '\r' => out.push_str("\\r"),
            c if c.is_control() => out.push_str(&format!("\\x{:02x}", u32::from(c))),
            c if is_invisible(c) || joins(c) => visible(c, &mut out),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unterminated_string_cannot_hide_the_rest() {
        // Ends at the line's end: the next line is shown.
        assert_eq!(
            sanitize("a\x1b]0;title never ends\nsecret part"),
            "a\nsecret part"
        );
        // Or after 4096 characters.
        let long = format!("b\x1b]8;;{}visible", "u".repeat(4097));
        assert!(sanitize(&long).ends_with("visible"), "{}", sanitize(&long));
        // A terminated one is dropped whole, as before.
        assert_eq!(sanitize("c\x1b]0;t\x07d"), "cd");
    }

    #[test]
    fn variation_selectors_are_shown_unless_they_serve_an_emoji() {
        assert_eq!(sanitize("\u{2764}\u{fe0f}"), "\u{2764}\u{fe0f}");
        assert_eq!(sanitize("ls\u{fe0f}"), "ls\\u{fe0f}");
        assert_eq!(sanitize("a\u{e0101}b"), "a\\u{e0101}b");
        assert!(has_hidden("rm\u{fe00} -rf"));
        assert!(
            has_hidden("\u{2764}\u{fe0f}"),
            "a command holds no emoji selector unseen"
        );
    }

    /// Every kind of sequence, and what a terminal should get instead.
    const CASES: &[(&str, &str)] = &[
        ("a\x1b[31mred\x1b[0m b", "ared b"),
        ("x\x1b]0;title\x07y", "xy"),
        ("x\x1b]8;;http://e\x1b\\y", "xy"),
        ("tab\tline\n\r\x08", "tab\tline\n"),
        ("\u{9b}ok", "ok"),
        ("clip\x1b]52;c;ZXZpbA==\x07!", "clip!"),
        ("\x1b[2J\x1b[Hclear", "clear"),
        ("\x1b[8mhidden\x1b[0m", "hidden"),
        ("fake\r\x1b[Kover", "fakeover"),
        ("dcs\x1bPq#0\x1b\\end", "dcsend"),
        ("osc-then-csi\x1b]0;t\x1b[1mX", "osc-then-csiX"),
        ("stray \x1b[ é", "stray é"),
        ("esc-c\x1bcdone", "esc-cdone"),
        (
            "RED \u{202e}exe.txt\u{202c}",
            "RED \\u{202e}exe.txt\\u{202c}",
        ),
        (
            "a\u{200b}b\u{2066}c\u{2069}\u{200e}\u{200f}\u{61c}",
            "a\\u{200b}b\\u{2066}c\\u{2069}\\u{200e}\\u{200f}\\u{61c}",
        ),
        ("tag\u{e0041}\u{e007f}", "tag\\u{e0041}\\u{e007f}"),
        ("line\u{2028}sep", "line\\u{2028}sep"),
        ("bom\u{feff}", "bom\\u{feff}"),
        ("filler\u{3164}", "filler\\u{3164}"),
        ("a\u{200d}b", "a\\u{200d}b"),
        ("👩\u{200d}💻 é", "👩\u{200d}💻 é"),
        ("unfinished \x1b]0;never ends", "unfinished "),
    ];

    #[test]
    fn cleans_every_sequence() {
        for (given, want) in CASES {
            assert_eq!(sanitize(given), *want, "{given:?}");
        }
    }

    /// A stream cut at every byte (and into three pieces at every pair of points) is cleaned
    /// exactly like the whole text.
    #[test]
    fn split_points_do_not_matter() {
        for (given, want) in CASES {
            let bytes = given.as_bytes();
            for i in 0..=bytes.len() {
                for j in i..=bytes.len() {
                    let mut out = String::new();
                    let mut c = Cleaner::new();
                    c.push_bytes(&bytes[..i], &mut out);
                    c.push_bytes(&bytes[i..j], &mut out);
                    c.push_bytes(&bytes[j..], &mut out);
                    c.finish(&mut out);
                    assert_eq!(out, *want, "{given:?} cut at {i} and {j}");
                }
            }
        }
    }

    #[test]
    fn invalid_utf8_becomes_replacement_characters() {
        let mut out = String::new();
        let mut c = Cleaner::new();
        c.push_bytes(b"a\xffb\xe2\x80", &mut out);
        c.finish(&mut out);
        assert_eq!(out, "a\u{fffd}b\u{fffd}");
    }

    #[test]
    fn hidden_characters_are_found_and_spelled_out() {
        assert!(!has_hidden("echo 'héllo\twörld'\nls"));
        for bad in [
            "a\x1b[8mb",
            "a\rb",
            "a\u{202e}b",
            "a\u{200b}b",
            "a\u{200d}b",
            "\u{9b}",
        ] {
            assert!(has_hidden(bad), "{bad:?}");
        }
        assert_eq!(
            spell_out("ls \x1b]52;c;x\x07\u{202e}\r"),
            "ls \\e]52;c;x\\x07\\u{202e}\\r"
        );
    }

    proptest::proptest! {
        #[test]
        fn never_lets_a_control_or_invisible_character_through(s in "\\PC*|[\\x00-\\x1f\\x7f-\\u{9f}\\u{200b}-\\u{200f}\\u{202a}-\\u{202e}a\\[\\]]*") {
            let out = sanitize(&s);
            // The one invisible character let through is the documented exception: a single
            // joiner or presentation selector right after a non-ASCII character that shows.
            let mut prev: Option<char> = None;
            for c in out.chars() {
                proptest::prop_assert!(!(c.is_control() && c != '\n' && c != '\t'), "{out:?}");
                if is_invisible(c) {
                    let after_shown_wide =
                        prev.is_some_and(|p| !p.is_ascii() && !is_invisible(p) && !p.is_control());
                    proptest::prop_assert!(joins(c) && after_shown_wide, "{out:?}");
                }
                prev = Some(c);
            }
        }
    }
}
