//! The page's scripts (`crates/tally-board/assets/*.js`): plain `<script>` tags that index.html
//! loads in order, sharing one global scope. Like the crates' files (ARCHITECTURE.md "Floors
//! inside a crate"), they stand in floors: a script names only what it or the scripts before it
//! define, so dependencies point one way, and each name is defined once.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use tally_board::assets::asset;

/// The scripts index.html loads, in order, plotly.js aside.
fn scripts() -> Vec<String> {
    let html = read("index.html");
    html.split("<script src=\"")
        .skip(1)
        .map(|s| s[..s.find('"').expect("a closed src")].to_owned())
        .filter(|s| s != "plotly.min.js")
        .collect()
}

fn assets() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("assets")
}

fn read(name: &str) -> String {
    let path = assets().join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The script's code with its comments and the text of its strings, template literals and
/// regular expressions blanked (a template's `${...}` stays code): what is left names things.
fn code(text: &str) -> String {
    let c: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    // Open template literals, each with the depth of braces opened in its current `${`.
    let mut templates: Vec<usize> = Vec::new();
    let mut in_template = false;
    // The last significant character of code, and the word it ends: does a `/` start a regex?
    let mut last = ';';
    let mut word = String::new();
    let mut i = 0;
    while i < c.len() {
        if in_template {
            match c[i] {
                '\\' => i += 1,
                '`' => {
                    in_template = false;
                    templates.pop();
                    last = 'a';
                    word.clear();
                }
                '$' if c.get(i + 1) == Some(&'{') => {
                    in_template = false;
                    i += 1;
                    last = '{';
                }
                _ => {}
            }
            i += 1;
            continue;
        }
        let ch = c[i];
        match ch {
            '/' if c.get(i + 1) == Some(&'/') => {
                while i < c.len() && c[i] != '\n' {
                    i += 1;
                }
                continue;
            }
            '/' if c.get(i + 1) == Some(&'*') => {
                i += 2;
                while i + 1 < c.len() && !(c[i] == '*' && c[i + 1] == '/') {
                    i += 1;
                }
                i += 2;
                continue;
            }
            '/' if "(,=:[!&|?{};+-*%<>~^".contains(last)
                || ["return", "typeof", "case", "of", "in", "throw"].contains(&word.as_str()) =>
            {
                let mut class = false;
                i += 1;
                while i < c.len() && (class || c[i] != '/') {
                    match c[i] {
                        '\\' => i += 1,
                        '[' => class = true,
                        ']' => class = false,
                        _ => {}
                    }
                    i += 1;
                }
                out.push_str(" 0 ");
                last = 'a';
                word.clear();
            }
            '"' | '\'' => {
                i += 1;
                while i < c.len() && c[i] != ch {
                    if c[i] == '\\' {
                        i += 1;
                    }
                    i += 1;
                }
                out.push_str(" 0 ");
                last = 'a';
                word.clear();
            }
            '`' => {
                templates.push(0);
                in_template = true;
                out.push(' ');
            }
            '{' if !templates.is_empty() => {
                *templates.last_mut().unwrap() += 1;
                out.push(ch);
                last = ch;
            }
            '}' if !templates.is_empty() => {
                let depth = templates.last_mut().unwrap();
                if *depth == 0 {
                    in_template = true; // the `${` closed: back in the template's text
                    out.push(' ');
                } else {
                    *depth -= 1;
                    out.push(ch);
                }
                last = ch;
            }
            _ => {
                out.push(ch);
                if is_ident(ch) {
                    if last != 'a' || c[i - 1].is_whitespace() {
                        word.clear();
                    }
                    word.push(ch);
                    last = 'a';
                } else if !ch.is_whitespace() {
                    word.clear();
                    last = ch;
                }
            }
        }
        i += 1;
    }
    out
}

fn is_ident(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || c == '$'
}

/// The names a script defines at its top level: `function f`, `async function f`, `const a`,
/// `let a = 0, b = 0`.
fn defined(text: &str) -> Vec<String> {
    let mut names = Vec::new();
    for line in text.lines() {
        let rest = line.strip_prefix("async ").unwrap_or(line);
        if let Some(rest) = rest.strip_prefix("function ") {
            names.push(rest.chars().take_while(|&c| is_ident(c)).collect());
        } else if let Some(rest) = line
            .strip_prefix("const ")
            .or_else(|| line.strip_prefix("let "))
        {
            names.push(rest.chars().take_while(|&c| is_ident(c)).collect());
            // `let a = 0, b = 0;` on one line: the names after a top-level comma.
            let mut depth = 0i32;
            for (i, c) in rest.char_indices() {
                match c {
                    '(' | '[' | '{' => depth += 1,
                    ')' | ']' | '}' => depth -= 1,
                    ',' if depth == 0 => {
                        let next = rest[i + 1..].trim_start();
                        let name: String = next.chars().take_while(|&c| is_ident(c)).collect();
                        if next[name.len()..].trim_start().starts_with('=') {
                            names.push(name);
                        }
                    }
                    _ => {}
                }
            }
        }
    }
    names
}

/// The names a script's code uses: identifiers not read as a property (`a.name`) or written as
/// an object's key (`name: value`).
fn used(code: &str) -> Vec<String> {
    let chars: Vec<char> = code.chars().collect();
    let mut names = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        if !is_ident(chars[i]) {
            i += 1;
            continue;
        }
        let start = i;
        while i < chars.len() && is_ident(chars[i]) {
            i += 1;
        }
        let before = chars[..start].iter().rev().find(|c| !c.is_whitespace());
        let property = before == Some(&'.');
        let key = chars.get(i) == Some(&':');
        if !property && !key && !chars[start].is_ascii_digit() {
            names.push(chars[start..i].iter().collect());
        }
    }
    names
}

#[test]
fn each_script_names_only_what_it_or_an_earlier_one_defines() {
    let scripts = scripts();
    assert!(scripts.len() > 5, "{scripts:?}");
    let mut owner: HashMap<String, usize> = HashMap::new();
    for (k, script) in scripts.iter().enumerate() {
        let names = defined(&read(script));
        assert!(!names.is_empty(), "{script} defines nothing");
        for name in names {
            if let Some(&other) = owner.get(&name) {
                panic!("{name} is defined by {} and {script}", scripts[other]);
            }
            owner.insert(name, k);
        }
    }
    let mut upward = Vec::new();
    for (k, script) in scripts.iter().enumerate() {
        for name in used(&code(&read(script))) {
            if let Some(&at) = owner.get(&name) {
                if at > k {
                    upward.push(format!("{script} uses {name} of {}", scripts[at]));
                }
            }
        }
    }
    upward.sort();
    upward.dedup();
    assert!(upward.is_empty(), "{upward:#?}");
}

#[test]
fn every_script_the_page_loads_is_served_and_nothing_else_is_a_script() {
    let scripts = scripts();
    for script in &scripts {
        let a = asset(&format!("/{script}")).unwrap_or_else(|| panic!("{script} not served"));
        assert!(a.content_type.starts_with("text/javascript"), "{script}");
        assert_eq!(a.body, read(script).as_bytes(), "{script}");
    }
    for entry in std::fs::read_dir(assets()).unwrap() {
        let name = entry.unwrap().file_name().into_string().unwrap();
        if name.ends_with(".js") {
            assert!(
                scripts.contains(&name),
                "{name} is not loaded by index.html"
            );
        }
    }
}
