//! The services under load: each `--url` with what is configured for it (a name, the
//! memory limit to ask for, where its CPU time is read, the languages it speaks) and the
//! languages found by asking it.
//!
//! A per-target flag is given once (for every target) or once per `--url`, in the same
//! order; `none` (or `-`) says "not for this one".

use std::collections::BTreeSet;

use anyhow::Context;
use grpo_serve::run_code::SANDBOX_FUSION_LANGUAGES;
use grpo_tasks::Language;
use serde_json::Value;

use super::cpu::CpuSource;

/// One service under load.
#[derive(Debug, Clone)]
pub struct Target {
    /// The name in the report (`--name`, else the URL's host and port).
    pub name: String,
    /// The base URL, without a trailing `/`.
    pub url: String,
    /// The memory limit each program asks for; `None` sends SandboxFusion's "none" (-1),
    /// which leaves the target's own default.
    pub memory_mb: Option<u64>,
    /// Where its CPU time is read, when it runs on this machine.
    pub cpu: Option<CpuSource>,
    /// The languages it runs.
    pub languages: BTreeSet<Language>,
    /// Where `languages` came from.
    pub languages_from: String,
}

/// The value of a per-target flag for each of `n` targets: none given, one for all, or one
/// per target.
pub fn per_target<T>(
    flag: &str,
    values: &[String],
    n: usize,
    default: impl Fn() -> T,
    parse: impl Fn(&str) -> anyhow::Result<T>,
) -> anyhow::Result<Vec<T>> {
    match values.len() {
        0 => Ok((0..n).map(|_| default()).collect()),
        1 => (0..n).map(|_| parse(&values[0])).collect(),
        k if k == n => values.iter().map(|v| parse(v)).collect(),
        k => anyhow::bail!(
            "{flag} is given {k} times for {n} --url: give it once (every target) or once per --url, in order"
        ),
    }
}

/// `--memory-mb`: a number of MiB, or `none`.
pub fn parse_memory(text: &str) -> anyhow::Result<Option<u64>> {
    let text = text.trim();
    if text.eq_ignore_ascii_case("none") || text == "-" {
        return Ok(None);
    }
    let mb: u64 = text
        .parse()
        .with_context(|| format!("--memory-mb {text:?}: expected MiB or none"))?;
    anyhow::ensure!(
        mb > 0,
        "--memory-mb {text:?}: expected MiB above 0, or none"
    );
    Ok(Some(mb))
}

/// `--languages`: `auto` (ask the target), or names separated by `,` or `+`.
pub fn parse_languages(text: &str) -> anyhow::Result<Option<BTreeSet<Language>>> {
    let text = text.trim();
    if text.eq_ignore_ascii_case("auto") {
        return Ok(None);
    }
    let mut set = BTreeSet::new();
    for name in text
        .split([',', '+'])
        .map(str::trim)
        .filter(|s| !s.is_empty())
    {
        set.insert(Language::parse(name).with_context(|| {
            format!("--languages {text:?}: {name:?} is not a language (python, c, cpp, nodejs, typescript)")
        })?);
    }
    anyhow::ensure!(!set.is_empty(), "--languages {text:?}: no language named");
    Ok(Some(set))
}

/// The languages of ours that SandboxFusion also runs (it has no `c`).
pub fn sandbox_fusion_languages() -> BTreeSet<Language> {
    Language::ALL
        .into_iter()
        .filter(|l| SANDBOX_FUSION_LANGUAGES.contains(&l.sandbox_fusion_name()))
        .collect()
}

/// The languages a target names in `GET /v1/languages` (`grpo serve`'s listing).
pub fn listed_languages(answer: &Value) -> Option<BTreeSet<Language>> {
    let listed = answer["languages"].as_array()?;
    Some(
        listed
            .iter()
            .filter_map(|l| l["language"].as_str().and_then(Language::parse))
            .collect(),
    )
}

/// Asks a target which languages it runs: `GET /v1/languages`; a target without that
/// route (404: SandboxFusion) is taken to speak SandboxFusion's list.
pub fn discover_languages(
    agent: &ureq::Agent,
    url: &str,
    auth: Option<&str>,
) -> anyhow::Result<(BTreeSet<Language>, String)> {
    let mut request = agent.get(format!("{url}/v1/languages"));
    if let Some(auth) = auth {
        request = request.header("Authorization", auth);
    }
    let mut answer = request
        .call()
        .with_context(|| format!("asking {url}/v1/languages"))?;
    let status = answer.status().as_u16();
    if status == 404 {
        return Ok((
            sandbox_fusion_languages(),
            "SandboxFusion's list (no /v1/languages)".to_owned(),
        ));
    }
    anyhow::ensure!(
        status == 200,
        "{url}/v1/languages answered HTTP {status}; pass --languages for this target"
    );
    let text = answer
        .body_mut()
        .read_to_string()
        .with_context(|| format!("reading {url}/v1/languages"))?;
    let body: Value =
        serde_json::from_str(&text).with_context(|| format!("{url}/v1/languages: not JSON"))?;
    let set = listed_languages(&body).with_context(|| {
        format!("{url}/v1/languages: no `languages` list; pass --languages for this target")
    })?;
    Ok((set, "/v1/languages".to_owned()))
}

/// The host part of an `http://` or `https://` URL.
pub fn host_of(url: &str) -> anyhow::Result<String> {
    let rest = url
        .strip_prefix("http://")
        .or_else(|| url.strip_prefix("https://"))
        .context("the URL must start with http:// or https://")?;
    let authority = rest.split('/').next().unwrap_or("");
    let authority = authority.rsplit('@').next().unwrap_or(authority);
    let host = if let Some(v6) = authority.strip_prefix('[') {
        v6.split(']').next().unwrap_or("")
    } else {
        authority.split(':').next().unwrap_or("")
    };
    anyhow::ensure!(!host.is_empty(), "the URL has no host");
    Ok(host.to_ascii_lowercase())
}

/// The port of a URL (its scheme's default when none is written).
pub fn port_of(url: &str) -> Option<u16> {
    let rest = url
        .strip_prefix("http://")
        .or_else(|| url.strip_prefix("https://"))?;
    let authority = rest.split('/').next()?;
    let after_host = authority.rsplit(']').next()?;
    match after_host.rsplit_once(':') {
        Some((_, port)) => port.parse().ok(),
        None => Some(if url.starts_with("https://") { 443 } else { 80 }),
    }
}

/// Whether a host name is this machine.
pub fn is_loopback(host: &str) -> bool {
    host == "localhost"
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

/// The report's default name for a target: its host and port.
pub fn default_name(url: &str) -> String {
    url.split("://")
        .nth(1)
        .unwrap_or(url)
        .split('/')
        .next()
        .unwrap_or(url)
        .to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn only_loopback_hosts_by_default() {
        for (url, loopback) in [
            ("http://127.0.0.1:8080", true),
            ("http://localhost:8080/", true),
            ("http://[::1]:8080", true),
            ("http://127.3.4.5", true),
            ("https://user@LOCALHOST:1/x", true),
            ("http://10.0.0.2:8080", false),
            ("http://sandbox.internal:8080", false),
            ("http://[2001:db8::1]:80", false),
        ] {
            assert_eq!(is_loopback(&host_of(url).unwrap()), loopback, "{url}");
        }
        assert!(host_of("ftp://x").is_err());
        assert!(host_of("http://").is_err());
        assert_eq!(port_of("http://127.0.0.1:8081/"), Some(8081));
        assert_eq!(port_of("http://[::1]:9"), Some(9));
        assert_eq!(port_of("http://localhost"), Some(80));
        assert_eq!(default_name("http://127.0.0.1:8081/"), "127.0.0.1:8081");
    }

    #[test]
    fn per_target_flags_are_once_or_once_per_url() {
        let one = vec!["256".to_owned()];
        let two = vec!["256".to_owned(), "none".to_owned()];
        let none = || None;
        assert_eq!(
            per_target("--memory-mb", &one, 2, none, parse_memory).unwrap(),
            vec![Some(256), Some(256)]
        );
        assert_eq!(
            per_target("--memory-mb", &two, 2, none, parse_memory).unwrap(),
            vec![Some(256), None]
        );
        assert_eq!(
            per_target("--memory-mb", &[], 2, none, parse_memory).unwrap(),
            vec![None, None]
        );
        let e = per_target("--memory-mb", &two, 3, none, parse_memory)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("--memory-mb is given 2 times for 3 --url"),
            "{e}"
        );
        assert!(parse_memory("0").is_err());
        assert!(
            parse_memory("lots")
                .unwrap_err()
                .to_string()
                .contains("--memory-mb")
        );
    }

    #[test]
    fn languages_configured_listed_or_sandbox_fusions() {
        let set = parse_languages("python+cpp,nodejs").unwrap().unwrap();
        assert_eq!(
            set,
            [Language::Python, Language::Cpp, Language::Javascript].into()
        );
        assert_eq!(parse_languages("auto").unwrap(), None);
        assert!(
            parse_languages("cobol")
                .unwrap_err()
                .to_string()
                .contains("cobol")
        );
        let sf = sandbox_fusion_languages();
        assert!(!sf.contains(&Language::C));
        assert!(sf.contains(&Language::Cpp) && sf.contains(&Language::Javascript));
        let listed = json!({"languages": [{"language": "python"}, {"language": "c"}, {"language": "nodejs"}]});
        assert_eq!(
            listed_languages(&listed).unwrap(),
            [Language::Python, Language::C, Language::Javascript].into()
        );
    }
}
