//! The one-time `--config` seed (contract §6.2 step 2, D7): read a YAML file, expand `${NAME}`
//! from the process environment, parse it into a `WorkerConfig`.

use crate::config::WorkerConfig;

/// Expands `${NAME}` placeholders with the process environment: an unset variable becomes the
/// empty string (reported in the returned list); `${NAME:default}` is left intact for the
/// configuration worker; an unterminated `${` stays literal.
pub fn expand_env(text: &str, lookup: impl Fn(&str) -> Option<String>) -> (String, Vec<String>) {
    let mut out = String::with_capacity(text.len());
    let mut unset = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let Some(end) = after.find('}') else {
            out.push_str(&rest[start..]);
            return (out, unset);
        };
        let name = &after[..end];
        if name.contains(':') {
            out.push_str(&rest[start..start + 2 + end + 1]);
        } else {
            match lookup(name) {
                Some(value) => out.push_str(&value),
                None => unset.push(name.to_string()),
            }
        }
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    (out, unset)
}

/// Loads the seed; any failure is a warning and no seed.
pub fn load(path: &std::path::Path) -> Option<WorkerConfig> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) => {
            tracing::warn!("--config {}: cannot read: {e}; ignoring the seed", path.display());
            return None;
        }
    };
    let (text, unset) = expand_env(&text, |name| std::env::var(name).ok());
    for name in unset {
        tracing::warn!("--config {}: ${{{name}}} is not set; expanded to \"\"", path.display());
    }
    match WorkerConfig::from_yaml(&text) {
        Ok(cfg) => Some(cfg),
        Err(e) => {
            tracing::warn!("--config {}: {e}; ignoring the seed", path.display());
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(name: &str) -> Option<String> {
        (name == "A").then(|| "1".to_string())
    }

    #[test]
    fn expansion_rules() {
        assert_eq!(expand_env("x${A}y", env), ("x1y".to_string(), vec![]));
        assert_eq!(expand_env("${B}", env), (String::new(), vec!["B".to_string()]));
        assert_eq!(expand_env("${B:dflt}", env).0, "${B:dflt}");
        assert_eq!(expand_env("a ${A", env).0, "a ${A");
        assert_eq!(expand_env("${A}${A}", env).0, "11");
    }
}
