//! MIOpen's text perf database (`*.udb.txt`, `*.db.txt`): one line per problem,
//! `KEY=ID:VALUES;ID:VALUES` (`src/db_record.cpp`, `DbRecord::ParseContents` and
//! `WriteContents`). MIOpen reads the first line of a key and ignores later ones, and ignores a
//! repeated ID within a line after its first.
//!
//! The merge never loses or reorders what is in the file: every existing line is written back
//! byte for byte, except that a new solver for a key already in the file is appended to that
//! key's first line (`;Solver:params`; a later line would be ignored), and with `replace` the
//! values of an existing (key, solver) are replaced in place. New keys are appended as new lines.

use std::collections::HashMap;

use super::{Entry, MergeCounts, Outcome};

/// One line's parts: `key`, and the byte ranges of each `ID:VALUES` item.
struct Line<'a> {
    key: &'a str,
    /// (id, values) in order.
    items: Vec<(&'a str, &'a str)>,
}

fn parse_line(line: &str) -> Option<Line<'_>> {
    let (key, rest) = line.split_once('=')?;
    let items = rest.split(';').filter_map(|item| item.split_once(':')).collect();
    Some(Line { key, items })
}

/// The (key, solver) pairs of a text database, with the values MIOpen would read.
pub fn read_entries(content: &str) -> HashMap<String, Vec<(String, String)>> {
    let mut map: HashMap<String, Vec<(String, String)>> = HashMap::new();
    for raw in content.lines() {
        let Some(line) = parse_line(raw.trim_end_matches('\r')) else {
            continue;
        };
        if map.contains_key(line.key) {
            continue;
        }
        let mut items: Vec<(String, String)> = Vec::new();
        for (id, values) in line.items {
            if !items.iter().any(|(i, _)| i == id) {
                items.push((id.to_string(), values.to_string()));
            }
        }
        map.insert(line.key.to_string(), items);
    }
    map
}

/// Merges `entries` (`key` = the 24-field text key) into `content`; returns the new content and
/// what happened to each entry.
pub fn merge(content: &str, entries: &[Entry], replace: bool) -> (String, MergeCounts) {
    let mut counts = MergeCounts::default();
    // First line of each key.
    let mut first_line: HashMap<&str, usize> = HashMap::new();
    let lines: Vec<&str> = content.split_inclusive('\n').collect();
    for (i, raw) in lines.iter().enumerate() {
        let body = raw.trim_end_matches(['\n', '\r']);
        if let Some(line) = parse_line(body) {
            first_line.entry(line.key).or_insert(i);
        }
    }
    // Per existing line: items to append and replacements; new keys in order.
    let mut appended: HashMap<usize, Vec<&Entry>> = HashMap::new();
    let mut replaced: HashMap<usize, Vec<&Entry>> = HashMap::new();
    let mut new_keys: Vec<(&str, Vec<&Entry>)> = Vec::new();
    // A (key, solver) given twice: the first one counts.
    let mut given: std::collections::HashSet<(&str, &str)> = std::collections::HashSet::new();
    for entry in entries {
        if !given.insert((entry.key.as_str(), entry.solver)) {
            counts.note(entry.solver, Outcome::Present);
            continue;
        }
        match first_line.get(entry.key.as_str()) {
            Some(&i) => {
                let body = lines[i].trim_end_matches(['\n', '\r']);
                let present = parse_line(body).and_then(|l| {
                    l.items
                        .iter()
                        .find(|(id, _)| *id == entry.solver)
                        .map(|(_, v)| v.to_string())
                });
                let pending = appended
                    .get(&i)
                    .is_some_and(|v| v.iter().any(|e| e.solver == entry.solver));
                match present {
                    _ if pending => counts.note(entry.solver, Outcome::Present),
                    Some(values) if values == entry.params => counts.note(entry.solver, Outcome::Present),
                    Some(_) if replace => {
                        replaced.entry(i).or_default().push(entry);
                        counts.note(entry.solver, Outcome::Replaced);
                    }
                    Some(_) => counts.note(entry.solver, Outcome::Present),
                    None => {
                        appended.entry(i).or_default().push(entry);
                        counts.note(entry.solver, Outcome::Added);
                    }
                }
            }
            None => match new_keys.iter_mut().find(|(k, _)| *k == entry.key) {
                Some((_, list)) if list.iter().any(|e| e.solver == entry.solver) => {
                    counts.note(entry.solver, Outcome::Present)
                }
                Some((_, list)) => {
                    list.push(entry);
                    counts.note(entry.solver, Outcome::Added);
                }
                None => {
                    new_keys.push((&entry.key, vec![entry]));
                    counts.note(entry.solver, Outcome::Added);
                    counts.new_keys += 1;
                }
            },
        }
    }
    let mut out = String::with_capacity(content.len() + entries.len() * 100);
    for (i, raw) in lines.iter().enumerate() {
        if !appended.contains_key(&i) && !replaced.contains_key(&i) {
            out.push_str(raw);
            continue;
        }
        let ending = &raw[raw.trim_end_matches(['\n', '\r']).len()..];
        let body = &raw[..raw.len() - ending.len()];
        let mut line = match replaced.get(&i) {
            Some(list) => replace_values(body, list),
            None => body.to_string(),
        };
        for e in appended.get(&i).into_iter().flatten() {
            line.push(';');
            line.push_str(e.solver);
            line.push(':');
            line.push_str(&e.params);
        }
        out.push_str(&line);
        out.push_str(if ending.is_empty() { "\n" } else { ending });
    }
    if !out.is_empty() && !out.ends_with('\n') && !new_keys.is_empty() {
        out.push('\n');
    }
    for (key, list) in new_keys {
        out.push_str(key);
        out.push('=');
        for (n, e) in list.iter().enumerate() {
            if n > 0 {
                out.push(';');
            }
            out.push_str(e.solver);
            out.push(':');
            out.push_str(&e.params);
        }
        out.push('\n');
    }
    (out, counts)
}

/// `body` with the values of the first item of each entry's solver replaced, every other byte
/// kept.
fn replace_values(body: &str, entries: &[&Entry]) -> String {
    let Some((key, rest)) = body.split_once('=') else {
        return body.to_string();
    };
    let mut done: Vec<&str> = Vec::new();
    let items: Vec<String> = rest
        .split(';')
        .map(|item| match item.split_once(':') {
            Some((id, _)) if !done.contains(&id) => {
                done.push(id);
                match entries.iter().find(|e| e.solver == id) {
                    Some(e) => format!("{id}:{}", e.params),
                    None => item.to_string(),
                }
            }
            _ => item.to_string(),
        })
        .collect();
    format!("{key}={}", items.join(";"))
}
