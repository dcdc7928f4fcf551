//! A small glob matcher for `--include`/`--exclude` and `.gitignore` lines: `*`, `?`, `[…]`
//! (`[!…]`, `[^…]`, ranges), `**` as a whole path segment, and `\` escapes. Paths are
//! '/'-separated and relative; matching is case-sensitive, as git's is on Linux.
//!
//! Written here instead of pulling in regex or globset: a few hundred bytes of binary instead of
//! hundreds of kilobytes. Matching runs the pattern as an NFA over the path's characters, so no
//! pattern can make it slow (`*a*a*a*b` is linear in the path, times the pattern's length).

#[derive(Debug, Clone, PartialEq, Eq)]
enum Token {
    Lit(char),
    /// `?`: one character other than '/'.
    One,
    /// `*`: any run of characters other than '/'.
    Star,
    /// `**/` at a segment start: zero or more whole folders ("", "a/", "a/b/"). Always followed
    /// by `InDir`, its second state: inside a folder name, where the pattern cannot go on yet.
    Dirs,
    InDir,
    /// `**` as the last segment: anything at all, '/' included.
    Rest,
    Class {
        negated: bool,
        items: Vec<(char, char)>,
    },
}

/// A compiled glob, matched against a whole relative path.
#[derive(Debug, Clone)]
pub(crate) struct Glob {
    tokens: Vec<Token>,
}

impl Glob {
    /// Compile `pattern`; the error says what is wrong with it (an unclosed `[`).
    pub(crate) fn new(pattern: &str) -> Result<Glob, String> {
        let chars: Vec<char> = pattern.chars().collect();
        let mut tokens = Vec::new();
        let mut i = 0;
        while i < chars.len() {
            let c = chars[i];
            let segment_start = i == 0 || chars[i - 1] == '/';
            match c {
                '*' if segment_start
                    && chars.get(i + 1) == Some(&'*')
                    && matches!(chars.get(i + 2), None | Some('/')) =>
                {
                    if i + 2 == chars.len() {
                        tokens.push(Token::Rest);
                        i += 2;
                    } else {
                        tokens.extend([Token::Dirs, Token::InDir]);
                        i += 3;
                    }
                }
                '*' => {
                    if tokens.last() != Some(&Token::Star) {
                        tokens.push(Token::Star);
                    }
                    i += 1;
                }
                '?' => {
                    tokens.push(Token::One);
                    i += 1;
                }
                '[' => {
                    let (token, next) = class(&chars, i)?;
                    tokens.push(token);
                    i = next;
                }
                '\\' => {
                    // A trailing backslash stands for itself.
                    tokens.push(Token::Lit(chars.get(i + 1).copied().unwrap_or('\\')));
                    i += 2;
                }
                _ => {
                    tokens.push(Token::Lit(c));
                    i += 1;
                }
            }
        }
        Ok(Glob { tokens })
    }

    /// Whether the whole of `path` matches.
    pub(crate) fn matches(&self, path: &str) -> bool {
        let n = self.tokens.len();
        // Fast path: a literal.
        if self.tokens.iter().all(|t| matches!(t, Token::Lit(_))) {
            return self.tokens.len() == path.chars().count()
                && self
                    .tokens
                    .iter()
                    .zip(path.chars())
                    .all(|(t, c)| *t == Token::Lit(c));
        }
        let mut now = vec![false; n + 1];
        let mut next = vec![false; n + 1];
        now[0] = true;
        self.close(&mut now);
        for c in path.chars() {
            next.iter_mut().for_each(|s| *s = false);
            let mut any = false;
            for (i, token) in self.tokens.iter().enumerate() {
                if !now[i] {
                    continue;
                }
                // The state each token moves to on `c`, if any.
                let to = match token {
                    Token::Lit(l) => (*l == c).then_some(i + 1),
                    Token::One => (c != '/').then_some(i + 1),
                    Token::Star | Token::Rest => (c != '/' || *token == Token::Rest).then_some(i),
                    // A folder name starts (or an empty one ends: "a//b" is "a/b" to git).
                    Token::Dirs => Some(if c == '/' { i } else { i + 1 }),
                    Token::InDir => Some(if c == '/' { i - 1 } else { i }),
                    Token::Class { negated, items } => {
                        let hit = items.iter().any(|&(lo, hi)| lo <= c && c <= hi);
                        (c != '/' && hit != *negated).then_some(i + 1)
                    }
                };
                if let Some(to) = to {
                    next[to] = true;
                    any = true;
                }
            }
            if !any {
                return false;
            }
            self.close(&mut next);
            std::mem::swap(&mut now, &mut next);
        }
        now[n]
    }

    /// Add the states reachable without reading a character: `*` and `**` match "", and `**/`
    /// matches "" or any whole folders (skipping its `InDir` state). Edges only go forward, so
    /// one pass in order is enough.
    fn close(&self, states: &mut [bool]) {
        for i in 0..self.tokens.len() {
            if states[i] {
                match self.tokens[i] {
                    Token::Star | Token::Rest => states[i + 1] = true,
                    Token::Dirs => states[i + 2] = true,
                    _ => {}
                }
            }
        }
    }
}

/// Parse the class starting at `chars[start] == '['`; returns it and the index after its `]`.
fn class(chars: &[char], start: usize) -> Result<(Token, usize), String> {
    let mut i = start + 1;
    let negated = matches!(chars.get(i), Some('!' | '^'));
    if negated {
        i += 1;
    }
    let mut items = Vec::new();
    let mut first = true;
    loop {
        let Some(&c) = chars.get(i) else {
            return Err("unclosed [".into());
        };
        if c == ']' && !first {
            return Ok((Token::Class { negated, items }, i + 1));
        }
        first = false;
        let lo = if c == '\\' {
            i += 1;
            *chars.get(i).ok_or("unclosed [")?
        } else {
            c
        };
        i += 1;
        if chars.get(i) == Some(&'-') && chars.get(i + 1).is_some_and(|&h| h != ']') {
            let mut hi = chars[i + 1];
            i += 2;
            if hi == '\\' {
                hi = *chars.get(i).ok_or("unclosed [")?;
                i += 1;
            }
            items.push((lo, hi));
        } else {
            items.push((lo, lo));
        }
    }
}

/// One `--include`/`--exclude` glob or one `.gitignore` line.
#[derive(Debug, Clone)]
pub(crate) struct Pattern {
    glob: Glob,
    /// A trailing '/': matches folders only.
    pub(crate) dir_only: bool,
    /// A leading '!' in a `.gitignore`: a match re-includes.
    pub(crate) negated: bool,
}

impl Pattern {
    /// A glob from the command line. Without a '/' (a trailing one aside) it matches a name at
    /// any depth (`*.md`); with one it is anchored at the root (`drafts/**`, `/todo.md`). A
    /// leading `./` is the root too.
    pub(crate) fn cli(text: &str) -> Result<Pattern, String> {
        let text = text.strip_prefix("./").unwrap_or(text);
        if text.is_empty() || text == "/" {
            return Err("empty pattern".into());
        }
        Pattern::build(text, false)
    }

    /// A `.gitignore` line: `None` for a blank line or a `#` comment. Trailing spaces are cut
    /// unless escaped (`\ `), `\r` too (a file written on Windows).
    pub(crate) fn gitignore(line: &str) -> Option<Result<Pattern, String>> {
        let line = line.strip_suffix('\r').unwrap_or(line);
        let mut end = line.len();
        while end > 0 && line.as_bytes()[end - 1] == b' ' {
            if end >= 2 && line.as_bytes()[end - 2] == b'\\' {
                break;
            }
            end -= 1;
        }
        let line = &line[..end];
        if line.is_empty() || line.starts_with('#') {
            return None;
        }
        let (negated, body) = match line.strip_prefix('!') {
            Some(rest) => (true, rest),
            None => (false, line),
        };
        if body.is_empty() || body == "/" {
            return None;
        }
        Some(Pattern::build(body, negated))
    }

    fn build(text: &str, negated: bool) -> Result<Pattern, String> {
        let (text, dir_only) = match text.strip_suffix('/') {
            Some(rest) => (rest, true),
            None => (text, false),
        };
        let glob = if let Some(anchored) = text.strip_prefix('/') {
            Glob::new(anchored)?
        } else if text.contains('/') {
            Glob::new(text)?
        } else {
            Glob::new(&format!("**/{text}"))?
        };
        Ok(Pattern {
            glob,
            dir_only,
            negated,
        })
    }

    /// Whether `rel` (relative to the pattern's base, '/'-separated) matches.
    pub(crate) fn matches(&self, rel: &str, is_dir: bool) -> bool {
        (is_dir || !self.dir_only) && self.glob.matches(rel)
    }

    /// Whether the folder `rel` matches as a whole: itself, or everything in it (`drafts/**`).
    pub(crate) fn matches_folder(&self, rel: &str) -> bool {
        self.glob.matches(rel) || self.glob.matches(&format!("{rel}/"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn m(pattern: &str, path: &str) -> bool {
        Glob::new(pattern).unwrap().matches(path)
    }

    #[test]
    fn literals_and_question_marks() {
        assert!(m("a.md", "a.md"));
        assert!(!m("a.md", "a.mdx"));
        assert!(!m("a.md", "b/a.md"));
        assert!(m("a?c", "abc"));
        assert!(!m("a?c", "a/c"));
        assert!(!m("a?c", "ac"));
        assert!(m("", ""));
        assert!(!m("", "a"));
        assert!(m("ä?ß", "äöß"), "a ? is one character, not one byte");
    }

    #[test]
    fn stars_stay_within_a_folder() {
        assert!(m("*.md", "note.md"));
        assert!(m("*.md", ".md"));
        assert!(!m("*.md", "a/note.md"));
        assert!(m("a/*", "a/b"));
        assert!(!m("a/*", "a/b/c"));
        assert!(m("*a*a*a*b", "xaxaxaxab"));
        assert!(!m("*a*a*a*b", &"a".repeat(500)));
        assert!(
            m("a***b", "axyb"),
            "runs of stars in a segment are one star"
        );
        assert!(m("Über*", "Über_alles.md"));
    }

    #[test]
    fn double_stars_span_folders() {
        assert!(m("**/*.md", "a.md"));
        assert!(m("**/*.md", "x/y/a.md"));
        assert!(!m("**/*.md", "x/y/a.txt"));
        assert!(m("a/**/b", "a/b"));
        assert!(m("a/**/b", "a/x/y/b"));
        assert!(!m("a/**/b", "a/xb"));
        assert!(!m("a/**/b", "ab"));
        assert!(
            !m("**/b", "xb"),
            "**/ matches whole folders, not part of a name"
        );
        assert!(!m("**/*.md", "x/y/.md/z"));
        assert!(m("**/b", "x/y/b"));
        assert!(m("a/**", "a/x"));
        assert!(m("a/**", "a/x/y.md"));
        assert!(!m("a/**", "a"));
        assert!(!m("a/**", "ab/x"));
        assert!(m("**", "any/thing/at/all"));
        assert!(m("a**b", "axb"), "** inside a segment is a star");
        assert!(!m("a**b", "a/b"));
    }

    #[test]
    fn classes() {
        assert!(m("[abc].md", "b.md"));
        assert!(!m("[abc].md", "d.md"));
        assert!(m("[a-c]x", "bx"));
        assert!(!m("[!a-c]x", "bx"));
        assert!(m("[^a-c]x", "dx"));
        assert!(!m("[!a]", "/"), "a class never matches '/'");
        assert!(m("[]]", "]"));
        assert!(m("[!]]", "a"));
        assert!(m("[a-]", "-"));
        assert!(m("[äöü]", "ö"));
        assert!(m("[\\]]", "]"));
        assert_eq!(Glob::new("[abc").unwrap_err(), "unclosed [");
        assert!(Glob::new("a[").is_err());
        assert!(Glob::new("[\\").is_err());
        assert!(Glob::new("[a-\\").is_err());
    }

    #[test]
    fn escapes() {
        assert!(m("\\*.md", "*.md"));
        assert!(!m("\\*.md", "a.md"));
        assert!(m("a\\[b", "a[b"));
        assert!(m("a\\", "a\\"));
    }

    #[test]
    fn cli_patterns() {
        let p = Pattern::cli("*.md").unwrap();
        assert!(p.matches("a.md", false));
        assert!(p.matches("deep/er/a.md", false));
        let p = Pattern::cli("drafts/**").unwrap();
        assert!(p.matches("drafts/a.md", false));
        assert!(!p.matches("x/drafts/a.md", false));
        assert!(p.matches_folder("drafts"));
        assert!(!p.matches_folder("drafts2"));
        let p = Pattern::cli("drafts/").unwrap();
        assert!(p.matches_folder("drafts") && p.matches("x/drafts", true));
        assert!(
            !p.matches("drafts", false),
            "a trailing / matches folders only"
        );
        let p = Pattern::cli("/todo.md").unwrap();
        assert!(p.matches("todo.md", false) && !p.matches("a/todo.md", false));
        let p = Pattern::cli("./notes/*.md").unwrap();
        assert!(p.matches("notes/a.md", false));
        assert!(Pattern::cli("").is_err());
        assert!(Pattern::cli("./").is_err());
        assert!(Pattern::cli("[x").is_err());
    }

    #[test]
    fn gitignore_lines() {
        assert!(Pattern::gitignore("").is_none());
        assert!(Pattern::gitignore("   ").is_none());
        assert!(Pattern::gitignore("# comment").is_none());
        assert!(Pattern::gitignore("!").is_none());
        let p = Pattern::gitignore("\\#hash").unwrap().unwrap();
        assert!(p.matches("#hash", false));
        let p = Pattern::gitignore("!keep.md\r").unwrap().unwrap();
        assert!(p.negated && p.matches("a/keep.md", false));
        let p = Pattern::gitignore("\\!bang").unwrap().unwrap();
        assert!(!p.negated && p.matches("!bang", false));
        let p = Pattern::gitignore("trailing   ").unwrap().unwrap();
        assert!(p.matches("trailing", false));
        let p = Pattern::gitignore("space\\ ").unwrap().unwrap();
        assert!(p.matches("space ", false));
        let p = Pattern::gitignore("build/").unwrap().unwrap();
        assert!(p.dir_only && p.matches("a/build", true) && !p.matches("a/build", false));
        let p = Pattern::gitignore("doc/frotz").unwrap().unwrap();
        assert!(p.matches("doc/frotz", false) && !p.matches("a/doc/frotz", false));
        let p = Pattern::gitignore("/root.md").unwrap().unwrap();
        assert!(p.matches("root.md", false) && !p.matches("a/root.md", false));
        let p = Pattern::gitignore("**/logs").unwrap().unwrap();
        assert!(p.matches("logs", true) && p.matches("a/b/logs", true));
        assert!(Pattern::gitignore("[oops").unwrap().is_err());
    }

    proptest! {
        #[test]
        fn never_panics(pattern in "[a-c*?/\\[\\]!^\\\\-]{0,12}", path in "[a-c/]{0,12}") {
            if let Ok(g) = Glob::new(&pattern) {
                let _ = g.matches(&path);
            }
            let _ = Pattern::gitignore(&pattern);
            let _ = Pattern::cli(&pattern);
        }

        #[test]
        fn a_literal_pattern_matches_only_itself(path in "[a-zäß/.]{0,12}", other in "[a-zäß/.]{0,12}") {
            let g = Glob::new(&path).unwrap();
            prop_assert!(g.matches(&path));
            prop_assert_eq!(g.matches(&other), path == other);
        }
    }
}
