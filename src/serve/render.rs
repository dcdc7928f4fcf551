//! Markdown to HTML for the page, on the server, with pulldown-cmark: replies and notes come
//! from models and from files, so nothing in them may become markup of its own. Raw HTML in
//! the markdown is shown as text (escaped, never passed through), link URLs are kept only when
//! they are http, https, mailto or relative (a `javascript:` or `data:` link becomes its text
//! alone), and an image becomes its alt text: nothing in a reply makes the page fetch anything. The page's Content-Security-Policy is the second wall.

use pulldown_cmark::{Event, LinkType, Options, Parser, Tag, TagEnd, html};

/// `text` (markdown) as HTML that carries no markup from the text itself.
/// A link to somewhere on this server, resolved against the page: no scheme, no leading `/`,
/// not only a fragment or a query.
fn is_relative(url: &str) -> bool {
    let before_slash = url.split('/').next().unwrap_or("");
    !url.is_empty() && !before_slash.contains(':') && !url.starts_with(['/', '#', '?'])
}

pub(crate) fn markdown(text: &str) -> String {
    markdown_with(text, &|_| None)
}

/// [`markdown`], with `relative` giving the URL a relative link should have instead (a note
/// page signs the links that lead to other notes); `None` keeps it as written.
pub(crate) fn markdown_with(text: &str, relative: &dyn Fn(&str) -> Option<String>) -> String {
    render(text, relative, None)
}

/// A note as Obsidian shows it: [`markdown_with`], plus `[[wikilinks]]` (and `[[note|label]]`)
/// as links to the URL `wiki` gives the name (none: the label alone), `![[embeds]]` as a
/// labelled placeholder (nothing is fetched), and single line breaks kept.
pub(crate) fn note_markdown(
    text: &str,
    relative: &dyn Fn(&str) -> Option<String>,
    wiki: &dyn Fn(&str) -> Option<String>,
) -> String {
    render(text, relative, Some(wiki))
}

/// Gives the URL a link should have instead of the one written (`None`: none, or as written).
type Rewrite<'a> = &'a dyn Fn(&str) -> Option<String>;

/// What became of a link's or image's start tag, for its end tag.
#[derive(Clone, Copy)]
enum Opened {
    Kept,
    Dropped,
    /// `![[embed]]`: a placeholder `span`.
    Embed,
}

fn render(
    text: &str,
    relative: &dyn Fn(&str) -> Option<String>,
    wiki: Option<Rewrite<'_>>,
) -> String {
    let mut options = Options::ENABLE_TABLES
        | Options::ENABLE_STRIKETHROUGH
        | Options::ENABLE_TASKLISTS
        | Options::ENABLE_YAML_STYLE_METADATA_BLOCKS;
    if wiki.is_some() {
        options |= Options::ENABLE_WIKILINKS;
    }
    // A link or image whose URL is refused: its tags are left out, its text kept.
    let mut opened: Vec<Opened> = Vec::new();
    let events = Parser::new_ext(text, options).filter_map(|event| match event {
        Event::Html(raw) | Event::InlineHtml(raw) => Some(Event::Text(raw)),
        Event::SoftBreak if wiki.is_some() => Some(Event::HardBreak),
        Event::Start(Tag::Link {
            link_type: link_type @ LinkType::WikiLink { .. },
            dest_url,
            title,
            id,
        }) => {
            let url = wiki
                .filter(|_| safe_url(&dest_url))
                .and_then(|w| w(&dest_url));
            opened.push(if url.is_some() {
                Opened::Kept
            } else {
                Opened::Dropped
            });
            url.map(|url| {
                Event::Start(Tag::Link {
                    link_type,
                    dest_url: url.into(),
                    title,
                    id,
                })
            })
        }
        Event::Start(Tag::Link {
            link_type,
            dest_url,
            title,
            id,
        }) => {
            let ok = safe_url(&dest_url);
            opened.push(if ok { Opened::Kept } else { Opened::Dropped });
            let dest_url = match is_relative(&dest_url)
                .then(|| relative(&dest_url))
                .flatten()
            {
                Some(url) => url.into(),
                None => dest_url,
            };
            ok.then_some(Event::Start(Tag::Link {
                link_type,
                dest_url,
                title,
                id,
            }))
        }
        // An embedded note or file: named, never fetched.
        Event::Start(Tag::Image {
            link_type: LinkType::WikiLink { .. },
            ..
        }) => {
            opened.push(Opened::Embed);
            Some(Event::InlineHtml(
                "<span class=\"embed\" title=\"embedded in the note (not shown here)\">embedded: "
                    .into(),
            ))
        }
        // No image is ever shown: a relative one would make the page send a request with its
        // token's authority (an API GET), a remote one would tell another host that the text
        // was read. Its alt text stays.
        Event::Start(Tag::Image { .. }) => {
            opened.push(Opened::Dropped);
            None
        }
        Event::End(end @ (TagEnd::Link | TagEnd::Image)) => match opened.pop() {
            Some(Opened::Kept) | None => Some(Event::End(end)),
            Some(Opened::Dropped) => None,
            Some(Opened::Embed) => Some(Event::InlineHtml("</span>".into())),
        },
        Event::InlineMath(t) | Event::DisplayMath(t) => Some(Event::Code(t)),
        other => Some(other),
    });
    let mut out = String::with_capacity(text.len() * 3 / 2);
    html::push_html(&mut out, events);
    out
}

/// Is this URL one a link may carry? http, https and mailto, or a relative URL (no scheme).
/// Read as a browser reads it: leading spaces and control characters, and tabs and newlines
/// anywhere, do not count, so `java\tscript:` is still `javascript:`.
pub(crate) fn safe_url(url: &str) -> bool {
    let cleaned: String = url
        .trim_start_matches(|c: char| c <= ' ')
        .chars()
        .filter(|c| !matches!(c, '\t' | '\n' | '\r'))
        .collect();
    let Some(end) = cleaned.find([':', '/', '?', '#', '\\']) else {
        return true;
    };
    if !cleaned[end..].starts_with(':') {
        return true;
    }
    let scheme = cleaned[..end].to_ascii_lowercase();
    matches!(scheme.as_str(), "http" | "https" | "mailto")
}

/// Escape text for an HTML text node or a quoted attribute.
pub(crate) fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markdown_becomes_html() {
        let h = markdown("# T\n\n- a\n- b\n\n```rust\nfn x() {}\n```\n\n|a|b|\n|-|-|\n|1|2|\n");
        assert!(h.contains("<h1>T</h1>"), "{h}");
        assert!(h.contains("<li>a</li>"), "{h}");
        assert!(h.contains("<code class=\"language-rust\">fn x() {}"), "{h}");
        assert!(h.contains("<table>") && h.contains("<td>2</td>"), "{h}");
        let l = markdown("[a](https://x.org/?q=1&r=2) [b](other.md) <mailto:me@x.org>");
        assert!(
            l.contains("<a href=\"https://x.org/?q=1&amp;r=2\">a</a>"),
            "{l}"
        );
        assert!(l.contains("<a href=\"other.md\">b</a>"), "{l}");
        assert!(l.contains("href=\"mailto:me@x.org\""), "{l}");
    }

    #[test]
    fn raw_html_is_text() {
        for evil in [
            "<script>alert(1)</script>",
            "hi <img src=x onerror=alert(1)> there",
            "<div onclick=\"x()\">\n\nblock\n\n</div>",
            "<iframe src=\"https://evil\"></iframe>",
            "`ok` <svg/onload=alert(1)>",
        ] {
            let h = markdown(evil);
            assert!(!h.contains("<script"), "{h}");
            assert!(!h.contains("<img"), "{h}");
            assert!(!h.contains("<div"), "{h}");
            assert!(!h.contains("<iframe"), "{h}");
            assert!(!h.contains("<svg"), "{h}");
            assert!(h.contains("&lt;"), "{h}");
        }
    }

    #[test]
    fn unsafe_urls_lose_their_link() {
        for evil in [
            "[x](javascript:alert(1))",
            "[x](JavaScript:alert(1))",
            "[x]( javascript:alert(1))",
            "[x](java&#9;script:alert(1))",
            "[x](java&#10;script:alert(1))",
            "[x](&#x6A;avascript:alert(1))",
            "[x](data:text/html,<script>alert(1)</script>)",
            "[x](vbscript:msgbox)",
            "<javascript:alert(1)>",
            "[x][r]\n\n[r]: javascript:alert(1)",
        ] {
            let h = markdown(evil);
            assert!(!h.contains("<a"), "{evil}: {h}");
            assert!(!h.to_ascii_lowercase().contains("href"), "{evil}: {h}");
        }
        let img = markdown("![alt text](javascript:alert(1)) ![ok](pic.png)");
        assert!(
            img.contains("alt text") && !img.contains("javascript"),
            "{img}"
        );
        assert!(img.contains("ok") && !img.contains("pic.png"), "{img}");
    }

    #[test]
    fn images_become_their_alt_text() {
        for md in [
            "see ![i](/kb/notes/search?q=imgfetch) and ![e](http://evil.example/x.png)",
            "![a](https://x.org/a.png \"t\")",
            "![r][ref]\n\n[ref]: /chats",
            "[![inner](pic.png)](https://x.org)",
            "![d](data:image/png;base64,AAAA)",
        ] {
            let h = markdown(md);
            assert!(!h.contains("<img"), "{md}: {h}");
            for url in [
                "imgfetch",
                "evil.example",
                "a.png",
                "/chats",
                "pic.png",
                "data:",
            ] {
                assert!(!h.contains(url), "{md}: {h}");
            }
        }
        let h = markdown("see ![the plan](plan.png) here");
        assert_eq!(h, "<p>see the plan here</p>\n");
        // A link around an image keeps its link, with the alt text as its text.
        let h = markdown("[![logo](l.png)](https://x.org)");
        assert!(h.contains("<a href=\"https://x.org\">logo</a>"), "{h}");
    }

    #[test]
    fn urls() {
        for ok in [
            "https://a.b",
            "http://a",
            "HTTPS://A",
            "mailto:a@b",
            "note.md",
            "/kb/x/note/1",
            "#top",
            "?q=1",
            "a/b:c",
            "",
        ] {
            assert!(safe_url(ok), "{ok}");
        }
        for bad in [
            "javascript:x",
            "\u{1}javascript:x",
            "j\na\tvascript:x",
            "data:x",
            "file:///etc/passwd",
            "vbscript:x",
        ] {
            assert!(!safe_url(bad), "{bad:?}");
        }
    }

    #[test]
    fn notes_render_wikilinks_embeds_and_line_breaks() {
        let wiki = |name: &str| Some(format!("/kb/n/note/{name}?sig=s"));
        let none = |_: &str| None;
        let h = note_markdown(
            "See [[Coffee]] and [[01_x_Tea_a1b2c3d4e|the tea]].\nNext line\n\n![[plan.png]] ![[Other note]]",
            &none,
            &wiki,
        );
        assert!(
            h.contains("<a href=\"/kb/n/note/Coffee?sig=s\">Coffee</a>"),
            "{h}"
        );
        assert!(
            h.contains("<a href=\"/kb/n/note/01_x_Tea_a1b2c3d4e?sig=s\">the tea</a>"),
            "{h}"
        );
        assert!(h.contains(".<br />\nNext line"), "{h}");
        assert!(h.contains(">embedded: plan.png</span>"), "{h}");
        assert!(h.contains(">embedded: Other note</span>"), "{h}");
        assert!(!h.contains("<img"), "{h}");
        // Unsafe or unresolved: the label alone; markup in a name stays text.
        let h = note_markdown(
            "[[javascript:alert(1)|x]] [[<b>bold</b>]] ![[<script>]]",
            &none,
            &wiki,
        );
        assert!(!h.contains("javascript"), "{h}");
        assert!(!h.contains("<b>") && !h.contains("<script>"), "{h}");
        let h = note_markdown("[[Gone|label]]", &none, &none);
        assert_eq!(h, "<p>label</p>\n");
        // Replies keep markdown's own rules: no wikilinks, soft breaks as they are.
        let r = markdown("a [[b]]\nc");
        assert!(!r.contains("<a") && !r.contains("<br"), "{r}");
    }

    #[test]
    fn escaping() {
        assert_eq!(
            escape("<a href=\"x\">'&"),
            "&lt;a href=&quot;x&quot;&gt;&#39;&amp;"
        );
    }
}
