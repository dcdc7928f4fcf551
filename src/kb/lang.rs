//! The language of a note or a query (English or German, told by their commonest words) and the
//! Snowball stems the words index holds: `backups` and `backup` meet, `Sicherungen` and
//! `Sicherung` too. Text is [`fold`]ed before it is stemmed, on both sides, so the index and the
//! query agree.

use rust_stemmers::{Algorithm, Stemmer};

use super::store::fold;

/// A language with a stemmer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) enum Lang {
    En,
    De,
}

impl Lang {
    pub(crate) fn code(self) -> &'static str {
        match self {
            Lang::En => "en",
            Lang::De => "de",
        }
    }

    pub(crate) fn from_code(code: &str) -> Option<Lang> {
        match code.trim().to_ascii_lowercase().as_str() {
            "en" | "english" | "en-us" | "en-gb" => Some(Lang::En),
            "de" | "german" | "deutsch" | "de-de" | "de-at" | "de-ch" => Some(Lang::De),
            _ => None,
        }
    }

    fn stemmer(self) -> Stemmer {
        Stemmer::create(match self {
            Lang::En => Algorithm::English,
            Lang::De => Algorithm::German,
        })
    }
}

/// Words only English uses often (none of them a German word).
const EN: &[&str] = &[
    "the", "and", "of", "to", "is", "that", "it", "for", "with", "as", "on", "are", "be", "this",
    "by", "not", "or", "from", "which", "have", "has", "was", "were", "how", "what", "does", "can",
    "we", "you", "my", "our", "a", "an", "at", "its", "their", "there", "when", "why", "been",
];
/// Words only German uses often (none of them an English word).
const DE: &[&str] = &[
    "der", "das", "und", "ist", "nicht", "ein", "eine", "zu", "den", "mit", "sich", "auf", "für",
    "von", "dem", "im", "auch", "wird", "werden", "sind", "oder", "bei", "nach", "wie", "wir",
    "ich", "es", "einen", "einer", "dass", "zum", "zur", "über", "wenn", "kann", "nur", "noch",
    "aus", "wo", "warum", "welche", "unsere", "unser", "läuft", "gibt", "haben", "hat", "sie",
];

/// The language `text` is in, told by its commonest words in the first 8 KB (umlauts and `ß`
/// count for German); `None` when it shows neither.
pub(crate) fn detect(text: &str) -> Option<Lang> {
    let mut end = text.len().min(8192);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let head = &text[..end];
    let lower = head.to_lowercase();
    let (mut en, mut de) = (0usize, 0usize);
    for w in lower.split(|c: char| !c.is_alphanumeric()) {
        if w.is_empty() {
            continue;
        }
        if EN.contains(&w) {
            en += 1;
        } else if DE.contains(&w) {
            de += 2;
        } else if w.contains(['ä', 'ö', 'ü', 'ß']) {
            de += 1;
        }
    }
    match (en, de) {
        (0, 0) => None,
        (en, de) if de > en => Some(Lang::De),
        _ => Some(Lang::En),
    }
}

/// Stems words of one language.
pub(crate) struct Stems {
    stemmer: Stemmer,
}

impl Stems {
    pub(crate) fn new(lang: Lang) -> Stems {
        Stems {
            stemmer: lang.stemmer(),
        }
    }

    /// One folded word's stem (numbers and very short words as they are).
    pub(crate) fn word(&self, folded: &str) -> String {
        if folded.chars().count() < 3 || !folded.chars().any(char::is_alphabetic) {
            return folded.to_owned();
        }
        self.stemmer.stem(folded).into_owned()
    }

    /// Text as the words index holds it: folded, each word stemmed, words separated by spaces.
    pub(crate) fn text(&self, text: &str) -> String {
        let folded = fold(text);
        let mut out = String::with_capacity(folded.len());
        for w in folded.split(|c: char| !c.is_alphanumeric()) {
            if w.is_empty() {
                continue;
            }
            if !out.is_empty() {
                out.push(' ');
            }
            out.push_str(&self.word(w));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn detects_english_and_german() {
        assert_eq!(
            detect("How do the backups of the database work?"),
            Some(Lang::En)
        );
        assert_eq!(
            detect("Wie läuft die Sicherung der Datenbank über Nacht?"),
            Some(Lang::De)
        );
        assert_eq!(detect("Datenbanksicherung"), None);
        assert_eq!(detect("Größe"), Some(Lang::De));
        assert_eq!(detect(""), None);
    }

    #[test]
    fn stems_both_languages_after_folding() {
        let en = Stems::new(Lang::En);
        assert_eq!(en.text("Backups running"), "backup run");
        assert_eq!(en.word("studies"), en.word("study"));
        let de = Stems::new(Lang::De);
        assert_eq!(de.word(&fold("Sicherungen")), de.word("sicherung"));
        assert_eq!(de.word(&fold("Häuser")), de.word(&fold("Haus")));
        // Umlauts end up without their marks, as the index's tokenizer folds them.
        assert_eq!(de.word(&fold("Über")), "uber");
        assert_eq!(de.text("42 Straßen"), "42 strass");
    }
}
