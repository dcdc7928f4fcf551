//! A `--data` document held compactly: the file's own text, checked once by serde_json (so it
//! accepts and refuses exactly what a `serde_json::Value` would, with the same errors), and
//! nothing else. A [`Node`] is an offset into that text; objects, arrays and strings are read
//! from it when a tool asks (keys and strings borrowed, unescaped only when they hold escapes).
//! A document therefore costs its own size, plus what one tool call looks at while it runs,
//! where a `Value` tree cost up to about 30 times its size (a map per small object).
//!
//! What a `Value` would show is kept exactly: an object's members come sorted by key (a
//! `Value` map is a `BTreeMap`) and a key given twice keeps its last value; numbers are read
//! by serde_json, so they print as a `Value` prints them.
//!
//! Reading costs one scan of the part of the text a call walks: a pointer scans the
//! containers on its way, `json_find` the whole document once per level of nesting (each
//! container is skipped over by its parent, then read), which is fine at the 16 MiB and 127
//! levels the documents are held to.

use std::borrow::Cow;
use std::fmt;

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::ser::{Serialize, SerializeMap, SerializeSeq, Serializer};
use serde_json::Number;

/// A checked JSON document.
pub(crate) struct Tree {
    /// Valid JSON (checked by serde_json, so valid UTF-8 too).
    text: String,
    /// Where the top value starts.
    root: usize,
}

impl fmt::Debug for Tree {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Tree({} bytes)", self.text.len())
    }
}

/// Takes every value serde_json reads and keeps none of it: checking a document costs no
/// memory beyond the parser's scratch buffer. It goes through `deserialize_any` as a `Value`
/// does, so depth, numbers, strings (UTF-8, escapes, surrogates) and trailing text are checked
/// the same way, with the same errors.
struct Check;

impl<'de> Deserialize<'de> for Check {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Check, D::Error> {
        d.deserialize_any(CheckVisitor)
    }
}

struct CheckVisitor;

impl<'de> Visitor<'de> for CheckVisitor {
    type Value = Check;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any valid JSON value")
    }
    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Check, E> {
        Ok(Check)
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<Check, E> {
        Ok(Check)
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<Check, E> {
        Ok(Check)
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Check, E> {
        Ok(Check)
    }
    fn visit_str<E: de::Error>(self, _: &str) -> Result<Check, E> {
        Ok(Check)
    }
    fn visit_unit<E: de::Error>(self) -> Result<Check, E> {
        Ok(Check)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Check, A::Error> {
        while seq.next_element::<Check>()?.is_some() {}
        Ok(Check)
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Check, A::Error> {
        while map.next_key::<Check>()?.is_some() {
            map.next_value::<Check>()?;
        }
        Ok(Check)
    }
}

impl Tree {
    /// Check `bytes` as one JSON document and keep them.
    pub(crate) fn parse(bytes: Vec<u8>) -> Result<Tree, serde_json::Error> {
        serde_json::from_slice::<Check>(&bytes)?;
        // serde_json checked every string as UTF-8, and JSON has nothing else but ASCII.
        let text = String::from_utf8(bytes)
            .map_err(|e| <serde_json::Error as de::Error>::custom(e.to_string()))?;
        let root = ws(text.as_bytes(), 0);
        Ok(Tree { text, root })
    }

    /// A tree of a value (tests, and documents made in code).
    #[cfg(test)]
    pub(crate) fn of(v: &serde_json::Value) -> Tree {
        Tree::parse(serde_json::to_vec(v).expect("a Value serializes")).expect("valid JSON")
    }

    pub(crate) fn root(&self) -> Node<'_> {
        Node {
            tree: self,
            at: self.root,
        }
    }

    fn bytes(&self) -> &[u8] {
        self.text.as_bytes()
    }
}

/// One value of a [`Tree`]: where it starts in the text.
#[derive(Clone, Copy)]
pub(crate) struct Node<'a> {
    tree: &'a Tree,
    at: usize,
}

/// What a value is.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Kind {
    Null,
    Bool,
    Number,
    String,
    Array,
    Object,
}

impl<'a> Node<'a> {
    pub(crate) fn kind(self) -> Kind {
        match self.tree.bytes()[self.at] {
            b'{' => Kind::Object,
            b'[' => Kind::Array,
            b'"' => Kind::String,
            b't' | b'f' => Kind::Bool,
            b'n' => Kind::Null,
            _ => Kind::Number,
        }
    }

    /// The value's own text (for a string, with its quotes and escapes).
    fn raw(self) -> &'a str {
        &self.tree.text[self.at..skip(self.tree.bytes(), self.at)]
    }

    /// A boolean's value (false for anything else).
    pub(crate) fn as_bool(self) -> bool {
        self.tree.bytes()[self.at] == b't'
    }

    /// A number as serde_json reads it (so it prints as a `Value` would).
    pub(crate) fn as_number(self) -> Option<Number> {
        if self.kind() != Kind::Number {
            return None;
        }
        serde_json::from_str(self.raw()).ok()
    }

    /// A string's text, unescaped (borrowed when it holds no escapes).
    pub(crate) fn as_str(self) -> Option<Cow<'a, str>> {
        (self.kind() == Kind::String).then(|| string(&self.tree.text, self.at))
    }

    /// An array's items, in order.
    pub(crate) fn items(self) -> Items<'a> {
        let b = self.tree.bytes();
        let next = if self.kind() == Kind::Array {
            let i = ws(b, self.at + 1);
            (b[i] != b']').then_some(i)
        } else {
            None
        };
        Items {
            tree: self.tree,
            next,
        }
    }

    /// An object's members as a `Value` map holds them: sorted by key, a key given twice
    /// keeping its last value.
    pub(crate) fn members(self) -> Vec<(Cow<'a, str>, Node<'a>)> {
        let mut all: Vec<(Cow<'a, str>, Node<'a>)> = self.raw_members().collect();
        // Stable: a key's occurrences stay in document order, and the last one is kept.
        all.sort_by(|a, b| a.0.cmp(&b.0));
        let mut out: Vec<(Cow<'a, str>, Node<'a>)> = Vec::with_capacity(all.len());
        for m in all {
            match out.last_mut() {
                Some(last) if last.0 == m.0 => *last = m,
                _ => out.push(m),
            }
        }
        out
    }

    /// How many items an array has, or keys an object has (each key once).
    pub(crate) fn len(self) -> usize {
        match self.kind() {
            Kind::Array => self.items().count(),
            Kind::Object => self.members().len(),
            _ => 0,
        }
    }

    /// An object's members in document order, duplicates and all.
    fn raw_members(self) -> RawMembers<'a> {
        let b = self.tree.bytes();
        let next = if self.kind() == Kind::Object {
            let i = ws(b, self.at + 1);
            (b[i] != b'}').then_some(i)
        } else {
            None
        };
        RawMembers {
            tree: self.tree,
            next,
        }
    }

    /// The member named `key` (the last, when the key is given twice).
    fn get(self, key: &str) -> Option<Node<'a>> {
        let mut found = None;
        for (k, v) in self.raw_members() {
            if k == key {
                found = Some(v);
            }
        }
        found
    }

    /// The value at a JSON pointer, as `serde_json::Value::pointer` finds it.
    pub(crate) fn pointer(self, pointer: &str) -> Option<Node<'a>> {
        if pointer.is_empty() {
            return Some(self);
        }
        if !pointer.starts_with('/') {
            return None;
        }
        pointer
            .split('/')
            .skip(1)
            .map(|x| x.replace("~1", "/").replace("~0", "~"))
            .try_fold(self, |target, token| match target.kind() {
                Kind::Object => target.get(&token),
                Kind::Array => parse_index(&token).and_then(|i| target.items().nth(i)),
                _ => None,
            })
    }

    /// The value as a `serde_json::Value` (tests).
    #[cfg(test)]
    pub(crate) fn to_value(self) -> serde_json::Value {
        serde_json::from_str(self.raw()).expect("checked JSON")
    }
}

/// `serde_json`'s reading of an array index in a pointer: no sign, no leading zero.
fn parse_index(s: &str) -> Option<usize> {
    if s.starts_with('+') || (s.starts_with('0') && s.len() != 1) {
        return None;
    }
    s.parse().ok()
}

/// An array's items.
pub(crate) struct Items<'a> {
    tree: &'a Tree,
    next: Option<usize>,
}

impl<'a> Iterator for Items<'a> {
    type Item = Node<'a>;

    fn next(&mut self) -> Option<Node<'a>> {
        let at = self.next?;
        let b = self.tree.bytes();
        let after = ws(b, skip(b, at));
        self.next = (b[after] == b',').then(|| ws(b, after + 1));
        Some(Node {
            tree: self.tree,
            at,
        })
    }
}

/// An object's members in document order.
struct RawMembers<'a> {
    tree: &'a Tree,
    next: Option<usize>,
}

impl<'a> Iterator for RawMembers<'a> {
    type Item = (Cow<'a, str>, Node<'a>);

    fn next(&mut self) -> Option<Self::Item> {
        let key = self.next?;
        let b = self.tree.bytes();
        let colon = ws(b, skip_string(b, key));
        let at = ws(b, colon + 1);
        let after = ws(b, skip(b, at));
        self.next = (b[after] == b',').then(|| ws(b, after + 1));
        Some((
            string(&self.tree.text, key),
            Node {
                tree: self.tree,
                at,
            },
        ))
    }
}

/// Past JSON whitespace.
fn ws(b: &[u8], mut i: usize) -> usize {
    while i < b.len() && matches!(b[i], b' ' | b'\t' | b'\n' | b'\r') {
        i += 1;
    }
    i
}

/// Past the string that opens at `i`.
fn skip_string(b: &[u8], i: usize) -> usize {
    let mut j = i + 1;
    while let Some(k) = memchr::memchr2(b'"', b'\\', &b[j..]) {
        if b[j + k] == b'"' {
            return j + k + 1;
        }
        // An escape: the character after the backslash is part of it.
        j += k + 2;
    }
    b.len()
}

/// Past the value that starts at `i`.
fn skip(b: &[u8], i: usize) -> usize {
    match b[i] {
        b'"' => skip_string(b, i),
        b'{' | b'[' => {
            let mut depth = 0usize;
            let mut j = i;
            while j < b.len() {
                match b[j] {
                    b'"' => {
                        j = skip_string(b, j);
                        continue;
                    }
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' => {
                        depth -= 1;
                        if depth == 0 {
                            return j + 1;
                        }
                    }
                    _ => {}
                }
                j += 1;
            }
            b.len()
        }
        _ => {
            let mut j = i;
            while j < b.len() && !matches!(b[j], b',' | b']' | b'}' | b' ' | b'\t' | b'\n' | b'\r')
            {
                j += 1;
            }
            j
        }
    }
}

/// The string that opens at `i`, unescaped.
fn string(text: &str, i: usize) -> Cow<'_, str> {
    let end = skip_string(text.as_bytes(), i);
    let inner = &text[i + 1..end - 1];
    if inner.contains('\\') {
        Cow::Owned(serde_json::from_str(&text[i..end]).unwrap_or_default())
    } else {
        Cow::Borrowed(inner)
    }
}

/// Items of an array shown, at most; the rest are counted.
pub(crate) const MAX_ITEMS: usize = 50;
/// Characters of a string shown, at most.
pub(crate) const MAX_CHARS: usize = 2000;
/// Levels of nesting shown; deeper objects and arrays are described by their size.
pub(crate) const MAX_DEPTH: usize = 8;

/// A value made small enough to send, serialized straight from the tree: long arrays and
/// strings summarized with counts, objects and arrays below [`MAX_DEPTH`] described by their
/// size. `depth` is the level the value sits at.
pub(crate) struct Bounded<'a> {
    pub(crate) node: Node<'a>,
    pub(crate) depth: usize,
}

impl Serialize for Bounded<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let node = self.node;
        match node.kind() {
            Kind::Null => s.serialize_unit(),
            Kind::Bool => s.serialize_bool(node.as_bool()),
            Kind::Number => match node.as_number() {
                Some(n) => n.serialize(s),
                None => s.serialize_unit(),
            },
            Kind::String => {
                let text = node.as_str().unwrap_or_default();
                match text.char_indices().nth(MAX_CHARS) {
                    Some((i, _)) => s.serialize_str(&format!(
                        "{}… ({} characters in all)",
                        &text[..i],
                        text.chars().count()
                    )),
                    None => s.serialize_str(&text),
                }
            }
            Kind::Array if self.depth >= MAX_DEPTH => {
                s.serialize_str(&format!("(an array of {} items)", node.len()))
            }
            Kind::Object if self.depth >= MAX_DEPTH => {
                s.serialize_str(&format!("(an object with {} keys)", node.len()))
            }
            Kind::Array => {
                let len = node.len();
                let shown = len.min(MAX_ITEMS) + usize::from(len > MAX_ITEMS);
                let mut seq = s.serialize_seq(Some(shown))?;
                for item in node.items().take(MAX_ITEMS) {
                    seq.serialize_element(&Bounded {
                        node: item,
                        depth: self.depth + 1,
                    })?;
                }
                if len > MAX_ITEMS {
                    seq.serialize_element(&format!(
                        "… {} more items ({len} in all; ask for one by its index, e.g. /path/{MAX_ITEMS})",
                        len - MAX_ITEMS,
                    ))?;
                }
                seq.end()
            }
            Kind::Object => {
                let members = node.members();
                let mut map = s.serialize_map(Some(members.len()))?;
                for (k, v) in &members {
                    map.serialize_entry(
                        k.as_ref(),
                        &Bounded {
                            node: *v,
                            depth: self.depth + 1,
                        },
                    )?;
                }
                map.end()
            }
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use proptest::prelude::*;
    use serde_json::{Value, json};

    use super::*;

    /// Random JSON values: every kind, keys that repeat, collide after escaping, or need
    /// escapes, strings with escapes and non-ASCII, numbers of each form.
    pub(crate) fn values() -> impl Strategy<Value = Value> {
        let key = prop_oneof![
            Just(String::new()),
            "[a-c]{1,2}",
            "[a/~ \\\\\"\n\u{e9}\u{1f600}]{0,4}",
        ];
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(|n| json!(n)),
            any::<u64>().prop_map(|n| json!(n)),
            (-1e300f64..1e300).prop_map(|f| json!(f)),
            "[a-z \\\\\"\n\t\u{0}\u{7f}\u{e9}\u{2028}\u{1f600}]{0,12}".prop_map(Value::String),
            // Past the bounds: long strings, long arrays.
            "[a-z\u{e9}]{1990,2010}".prop_map(Value::String),
            prop::collection::vec(any::<u8>(), 45..60).prop_map(|a| json!(a)),
        ];
        leaf.prop_recursive(10, 300, 8, move |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..8).prop_map(Value::Array),
                prop::collection::vec((key.clone(), inner), 0..8)
                    .prop_map(|kv| Value::Object(kv.into_iter().collect())),
            ]
        })
    }

    /// What was sent before the tree: the `Value`, shrunk.
    fn shrink(v: &Value, depth: usize) -> Value {
        match v {
            Value::String(s) => match s.char_indices().nth(MAX_CHARS) {
                Some((i, _)) => Value::String(format!(
                    "{}… ({} characters in all)",
                    &s[..i],
                    s.chars().count()
                )),
                None => v.clone(),
            },
            Value::Array(a) if depth >= MAX_DEPTH => {
                Value::String(format!("(an array of {} items)", a.len()))
            }
            Value::Object(m) if depth >= MAX_DEPTH => {
                Value::String(format!("(an object with {} keys)", m.len()))
            }
            Value::Array(a) => {
                let mut out: Vec<Value> = a
                    .iter()
                    .take(MAX_ITEMS)
                    .map(|x| shrink(x, depth + 1))
                    .collect();
                if a.len() > MAX_ITEMS {
                    out.push(Value::String(format!(
                        "… {} more items ({} in all; ask for one by its index, e.g. /path/{MAX_ITEMS})",
                        a.len() - MAX_ITEMS,
                        a.len()
                    )));
                }
                Value::Array(out)
            }
            Value::Object(m) => Value::Object(
                m.iter()
                    .map(|(k, x)| (k.clone(), shrink(x, depth + 1)))
                    .collect(),
            ),
            other => other.clone(),
        }
    }

    /// Every pointer into a value.
    fn pointers(v: &Value, at: String, out: &mut Vec<String>) {
        out.push(at.clone());
        match v {
            Value::Object(m) => {
                for (k, x) in m {
                    pointers(
                        x,
                        format!("{at}/{}", k.replace('~', "~0").replace('/', "~1")),
                        out,
                    );
                }
            }
            Value::Array(a) => {
                for (i, x) in a.iter().enumerate() {
                    pointers(x, format!("{at}/{i}"), out);
                }
            }
            _ => {}
        }
    }

    /// The tree read back into a `Value`, through its own accessors only.
    fn rebuild(n: Node<'_>) -> Value {
        match n.kind() {
            Kind::Null => Value::Null,
            Kind::Bool => Value::Bool(n.as_bool()),
            Kind::Number => Value::Number(n.as_number().unwrap()),
            Kind::String => Value::String(n.as_str().unwrap().into_owned()),
            Kind::Array => Value::Array(n.items().map(rebuild).collect()),
            Kind::Object => Value::Object(
                n.members()
                    .into_iter()
                    .map(|(k, v)| (k.into_owned(), rebuild(v)))
                    .collect(),
            ),
        }
    }

    /// Text of a value with whitespace between every token, to test the scanner on it.
    fn spaced(v: &Value) -> String {
        let pretty = serde_json::to_string_pretty(v).unwrap();
        pretty.replace("\n", "\r\n\t ")
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(128))]

        #[test]
        fn the_tree_reads_as_serde_json_does(v in values(), bogus in "[/a-c0-9~+]{0,6}") {
            for text in [serde_json::to_string(&v).unwrap(), spaced(&v)] {
                // What serde_json reads from the same text (floats may not round-trip).
                let v: Value = serde_json::from_str(&text).unwrap();
                let tree = Tree::parse(text.clone().into_bytes()).unwrap();
                let root = tree.root();
                prop_assert_eq!(&rebuild(root), &v);
                prop_assert_eq!(
                    serde_json::to_string_pretty(&Bounded { node: root, depth: 0 }).unwrap(),
                    serde_json::to_string_pretty(&shrink(&v, 0)).unwrap()
                );
                let mut all = Vec::new();
                pointers(&v, String::new(), &mut all);
                all.push(bogus.clone());
                all.push(format!("/{bogus}"));
                for p in &all {
                    let want = v.pointer(p);
                    let got = root.pointer(p).map(Node::to_value);
                    prop_assert_eq!(got.as_ref(), want, "pointer {:?}", p);
                    if let Some(w) = want {
                        let n = root.pointer(p).unwrap();
                        let len = match w {
                            Value::Array(a) => a.len(),
                            Value::Object(m) => m.len(),
                            _ => 0,
                        };
                        prop_assert_eq!(n.len(), len);
                    }
                }
            }
        }

        #[test]
        fn the_same_documents_are_refused(text in "[\\[\\]{}\",:0-9a-z.eE+\\- \\\\]{0,24}") {
            let ours = Tree::parse(text.clone().into_bytes()).map(|_| ()).map_err(|e| e.to_string());
            let theirs = serde_json::from_str::<Value>(&text).map(|_| ()).map_err(|e| e.to_string());
            prop_assert_eq!(ours, theirs);
        }
    }

    #[test]
    fn a_key_given_twice_keeps_its_last_value_as_a_value_map_does() {
        let text = r#"{"b": 1, "a": {"x": 1}, "b": 2, "a": [3], "c": 0}"#;
        let tree = Tree::parse(text.as_bytes().to_vec()).unwrap();
        let want: Value = serde_json::from_str(text).unwrap();
        assert_eq!(want, json!({"a": [3], "b": 2, "c": 0}));
        assert_eq!(rebuild(tree.root()), want);
        assert_eq!(tree.root().len(), 3);
        assert_eq!(tree.root().pointer("/b").unwrap().to_value(), json!(2));
        assert_eq!(tree.root().pointer("/a/0").unwrap().to_value(), json!(3));
        // The same key written with an escape is the same key.
        let tree = Tree::parse(br#"{"k": 1, "\u006b": 2}"#.to_vec()).unwrap();
        assert_eq!(tree.root().len(), 1);
        assert_eq!(tree.root().pointer("/k").unwrap().to_value(), json!(2));
    }

    #[test]
    fn escapes_are_read_lazily_and_exactly() {
        let text = r#"{"a\"b": "x\\y\n\u00e9\ud83d\ude00", "plain": "no escapes", "s\/": "\/"}"#;
        let tree = Tree::parse(text.as_bytes().to_vec()).unwrap();
        let root = tree.root();
        let m = root.members();
        let keys: Vec<&str> = m.iter().map(|(k, _)| k.as_ref()).collect();
        assert_eq!(keys, ["a\"b", "plain", "s/"]);
        assert!(matches!(m[1].0, Cow::Borrowed(_)));
        assert_eq!(m[0].1.as_str().unwrap(), "x\\y\n\u{e9}\u{1f600}");
        assert!(matches!(
            m[1].1.as_str().unwrap(),
            Cow::Borrowed("no escapes")
        ));
        assert_eq!(root.pointer("/s~1").unwrap().as_str().unwrap(), "/");
    }

    #[test]
    fn deep_nesting_to_the_limit_is_read_and_beyond_it_refused() {
        let ok = format!("{}1{}", "[".repeat(127), "]".repeat(127));
        let tree = Tree::parse(ok.into_bytes()).unwrap();
        let deepest = format!("{}/0", "/0".repeat(126));
        assert_eq!(tree.root().pointer(&deepest).unwrap().to_value(), json!(1));
        let objects = format!("{}1{}", r#"{"a":"#.repeat(127), "}".repeat(127));
        let tree = Tree::parse(objects.into_bytes()).unwrap();
        assert_eq!(
            tree.root().pointer(&"/a".repeat(127)).unwrap().to_value(),
            json!(1)
        );
        let deep = format!("{}{}", "[".repeat(128), "]".repeat(128));
        let err = Tree::parse(deep.into_bytes()).unwrap_err();
        assert!(
            err.to_string().starts_with("recursion limit exceeded"),
            "{err}"
        );
    }

    #[test]
    fn a_huge_string_is_borrowed_and_summarized() {
        let s = "é".repeat(3_000_000);
        let tree = Tree::parse(format!("[\"{s}\"]").into_bytes()).unwrap();
        let item = tree.root().pointer("/0").unwrap();
        assert!(matches!(item.as_str().unwrap(), Cow::Borrowed(_)));
        let shown = serde_json::to_string(&Bounded {
            node: item,
            depth: 0,
        })
        .unwrap();
        assert!(
            shown.ends_with("… (3000000 characters in all)\""),
            "{}",
            &shown[shown.len() - 60..]
        );
        assert_eq!(
            shown.chars().count(),
            MAX_CHARS + 2 + "… (3000000 characters in all)".chars().count()
        );
    }

    #[test]
    fn invalid_utf8_and_invalid_json_are_refused_as_serde_json_refuses_them() {
        for bad in [
            &b"{\"a\": \"\xff\"}"[..],
            b"{\"\xc3\": 1}",
            b"[\"\\ud800\"]",
            b"[1e400]",
            b"[1,]",
            b"{\"a\" 1}",
            b"[1] x",
            b"",
            b"\"\x01\"",
        ] {
            let ours = Tree::parse(bad.to_vec()).unwrap_err().to_string();
            let theirs = serde_json::from_slice::<Value>(bad)
                .unwrap_err()
                .to_string();
            assert_eq!(ours, theirs, "{}", String::from_utf8_lossy(bad));
        }
        // Text after the document, and a byte-order mark, as serde_json says.
        assert!(Tree::parse(b"{} {}".to_vec()).is_err());
        assert!(Tree::parse(b" \n{}\n ".to_vec()).is_ok());
    }
}
