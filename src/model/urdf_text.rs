//! The URDF text as written, before `urdf-rs` reads it: a small scanner of
//! tags, attributes and text with their line numbers.
//!
//! Two checks need the text itself rather than the parsed robot: whether
//! it is unexpanded xacro (the parse of such a file silently drops every
//! `<xacro:...>` element) and whether a number is written as `inf` or
//! `nan` (after parsing, URDF 1.2's "no bound" is infinite too, so only the
//! text tells a missing bound from an infinite one). Comments, processing
//! instructions, CDATA and the doctype are skipped. Malformed XML ends the
//! scan quietly: `urdf-rs` reports it properly afterwards.

/// One piece of the document.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Item<'a> {
    /// `<name attr="value" ...>` or `<name .../>` (then `Close` follows at
    /// once, so depths stay balanced).
    Open(Tag<'a>),
    /// `</name>`, or the end of a self-closing tag.
    Close,
    /// Character data between tags, with the line it starts on.
    Text(&'a str, usize),
}

/// An opening tag.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Tag<'a> {
    pub name: &'a str,
    pub attrs: Vec<(&'a str, &'a str)>,
    /// 1-based line of the `<`.
    pub line: usize,
}

impl<'a> Tag<'a> {
    pub fn attr(&self, name: &str) -> Option<&'a str> {
        self.attrs.iter().find(|(n, _)| *n == name).map(|(_, v)| *v)
    }
}

/// The items of `xml` in document order.
pub(crate) fn items(xml: &str) -> Items<'_> {
    Items {
        xml,
        pos: 0,
        line: 1,
        close_next: false,
    }
}

pub(crate) struct Items<'a> {
    xml: &'a str,
    pos: usize,
    line: usize,
    /// The last tag was self-closing: yield its `Close` next.
    close_next: bool,
}

impl<'a> Items<'a> {
    /// Moves past `n` bytes, counting lines.
    fn advance(&mut self, n: usize) {
        let end = (self.pos + n).min(self.xml.len());
        self.line += self.xml[self.pos..end].matches('\n').count();
        self.pos = end;
    }

    /// Skips to just after `end`; false when it never comes.
    fn skip_past(&mut self, end: &str) -> bool {
        match self.xml[self.pos..].find(end) {
            Some(i) => {
                self.advance(i + end.len());
                true
            }
            None => {
                self.pos = self.xml.len();
                false
            }
        }
    }

    /// Reads the tag starting at `self.pos` (just after its `<`).
    fn tag(&mut self, line: usize) -> Option<Item<'a>> {
        let rest = &self.xml[self.pos..];
        let name_len = rest
            .find(|c: char| c.is_whitespace() || c == '>' || c == '/')
            .unwrap_or(rest.len());
        let name = &rest[..name_len];
        let mut attrs = Vec::new();
        let mut i = name_len;
        loop {
            let r = &rest[i..];
            let trimmed = r.trim_start();
            i += r.len() - trimmed.len();
            if trimmed.starts_with("/>") {
                self.advance(i + 2);
                self.close_next = true;
                break;
            }
            if trimmed.starts_with('>') {
                self.advance(i + 1);
                break;
            }
            let eq = trimmed.find('=')?;
            let key = trimmed[..eq].trim();
            let after = trimmed[eq + 1..].trim_start();
            let quote = after.chars().next().filter(|c| *c == '"' || *c == '\'')?;
            let close = after[1..].find(quote)?;
            attrs.push((key, &after[1..1 + close]));
            i += trimmed.len() - after.len() + close + 2;
        }
        Some(Item::Open(Tag { name, attrs, line }))
    }
}

impl<'a> Iterator for Items<'a> {
    type Item = Item<'a>;

    fn next(&mut self) -> Option<Item<'a>> {
        if std::mem::take(&mut self.close_next) {
            return Some(Item::Close);
        }
        loop {
            let rest = &self.xml[self.pos..];
            if rest.is_empty() {
                return None;
            }
            let Some(lt) = rest.find('<') else {
                let line = self.line;
                self.advance(rest.len());
                return Some(Item::Text(rest, line));
            };
            if lt > 0 {
                let line = self.line;
                self.advance(lt);
                return Some(Item::Text(&rest[..lt], line));
            }
            let skipped = [
                ("<!--", "-->"),
                ("<![CDATA[", "]]>"),
                ("<?", "?>"),
                ("<!", ">"),
            ];
            if let Some((_, end)) = skipped.iter().find(|(start, _)| rest.starts_with(start)) {
                if !self.skip_past(end) {
                    return None;
                }
                continue;
            }
            if rest.starts_with("</") {
                if !self.skip_past(">") {
                    return None;
                }
                return Some(Item::Close);
            }
            let line = self.line;
            self.advance(1);
            let tag = self.tag(line);
            if tag.is_none() {
                self.pos = self.xml.len();
            }
            return tag;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags_attributes_lines_and_skipped_parts() {
        let xml = "<?xml version=\"1.0\"?>\n<!-- a <fake> tag -->\n<robot name='r'>\n  <link name=\"a\"/>\n  <![CDATA[ <no/> ]]>text\n</robot>";
        let v: Vec<Item> = items(xml).collect();
        let opens: Vec<(&str, usize)> = v
            .iter()
            .filter_map(|i| match i {
                Item::Open(t) => Some((t.name, t.line)),
                _ => None,
            })
            .collect();
        assert_eq!(opens, [("robot", 3), ("link", 4)]);
        let Item::Open(link) = &v
            .iter()
            .filter(|i| matches!(i, Item::Open(_)))
            .nth(1)
            .unwrap()
        else {
            unreachable!()
        };
        assert_eq!(link.attr("name"), Some("a"));
        assert_eq!(v.iter().filter(|i| **i == Item::Close).count(), 2);
        assert!(v.contains(&Item::Text("text\n", 5)));
    }

    #[test]
    fn malformed_text_ends_the_scan_without_panicking() {
        for xml in [
            "<robot name=",
            "<robot name=\"x",
            "<!-- open",
            "<a b c>",
            "<",
            "</",
        ] {
            let _ = items(xml).count();
        }
    }
}
