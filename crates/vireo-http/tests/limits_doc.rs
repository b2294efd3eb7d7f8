//! The limits table (docs/LIMITS.md, in the crate documentation, and the same table in the
//! README) says where each limit is set, and says it truly: every `Limits` field is in it, with
//! its default, and every row that is not a `Limits` field is a `Server` setting.

use vireo_http::Limits;

const LIMITS_MD: &str = include_str!("../../../docs/LIMITS.md");
const README: &str = include_str!("../../../README.md");

/// The rows of the first table in `doc`, as cells.
fn table(doc: &str) -> Vec<Vec<String>> {
    doc.lines()
        .skip_while(|line| !line.starts_with('|'))
        .take_while(|line| line.starts_with('|'))
        .skip(2)
        .map(|line| {
            line.trim_matches('|')
                .split('|')
                .map(|cell| cell.trim().to_owned())
                .collect()
        })
        .collect()
}

/// `Limits`' fields and their default values, as its `Debug` prints them.
fn limits_fields() -> Vec<(String, String)> {
    let debug = format!("{:?}", Limits::default());
    let inner = debug
        .strip_prefix("Limits { ")
        .and_then(|rest| rest.strip_suffix(" }"))
        .expect("Limits prints as a struct");
    inner
        .split(", ")
        .map(|field| {
            let (name, value) = field.split_once(": ").expect("name: value");
            (name.to_owned(), value.to_owned())
        })
        .collect()
}

#[test]
fn the_readme_and_the_crate_docs_show_the_same_table() {
    assert!(!table(LIMITS_MD).is_empty());
    let readme_section = &README[README.find("## Limits and defaults").unwrap()..];
    assert_eq!(table(readme_section), table(LIMITS_MD));
}

#[test]
fn every_row_names_where_it_is_set_and_every_limits_field_has_a_row() {
    let rows = table(LIMITS_MD);
    let fields = limits_fields();
    let mut seen = Vec::new();
    for row in &rows {
        let set_with = &row[2];
        if let Some(rest) = set_with.strip_prefix("`Limits::") {
            let field = rest.split('`').next().unwrap();
            assert!(
                fields.iter().any(|(name, _)| name == field),
                "{set_with}: no such Limits field"
            );
            seen.push(field.to_owned());
        } else {
            assert!(
                set_with.starts_with("`Server::"),
                "{row:?}: neither a Limits field nor a Server setting"
            );
        }
    }
    for (field, _) in &fields {
        assert!(seen.contains(field), "Limits::{field} has no row");
    }
}

#[test]
fn the_defaults_in_the_table_are_the_real_ones() {
    let defaults: Vec<(String, String)> = limits_fields();
    let default_of = |field: &str| &defaults.iter().find(|(n, _)| n == field).unwrap().1;
    for row in table(LIMITS_MD) {
        let Some(rest) = row[2].strip_prefix("`Limits::") else {
            continue;
        };
        let field = rest.split('`').next().unwrap();
        let shown = row[1].as_str();
        let real = default_of(field);
        // A number, then a unit if any, then words ("per request").
        let mut words = shown.split(' ');
        let number = words.next().unwrap().replace(',', "");
        let expected = match words.next() {
            Some("KiB") => (number.parse::<u64>().unwrap() * 1024).to_string(),
            Some("MiB") => (number.parse::<u64>().unwrap() * 1024 * 1024).to_string(),
            Some("s") => format!("{number}s"),
            _ => number,
        };
        assert_eq!(real, &expected, "{field}: the table says {shown}");
    }
}

#[test]
fn the_server_settings_in_the_table_exist_with_those_defaults() {
    let rows = table(LIMITS_MD);
    let row = |set_with: &str| {
        rows.iter()
            .find(|row| row[2] == set_with)
            .unwrap_or_else(|| panic!("no row set with {set_with}"))
            .clone()
    };
    // Named as functions, so a renamed setting fails to compile here.
    let _ = vireo_http::Server::max_blocking_threads;
    let _ = vireo_http::Server::shutdown_timeout;
    let threads = row("`Server::max_blocking_threads`");
    assert_eq!(
        threads[1],
        vireo_http::DEFAULT_MAX_BLOCKING_THREADS.to_string()
    );
    let shutdown = row("`Server::shutdown_timeout`");
    let seconds = vireo_http::limits::DEFAULT_SHUTDOWN_TIMEOUT.as_secs();
    assert_eq!(shutdown[1], format!("{seconds} s"));
}
