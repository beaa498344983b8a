//! Algorithms: the one table that says, for each algorithm name a runner may give, its
//! run-directory name, its timing profile and its panel title (docs/contract/run-artifacts.md).

use crate::types::Profile;
use std::borrow::Cow;

/// A known algorithm.
#[derive(Debug, PartialEq, Eq)]
pub struct AlgoSpec {
    /// The canonical name (`sac`, `flashsac`, ...).
    pub name: &'static str,
    /// Other spellings accepted for it (matched case-insensitively, like `name`).
    pub aliases: &'static [&'static str],
    /// The run directory's `algo_log_name`.
    pub log_name: &'static str,
    /// The timing profile its runner reports.
    pub profile: Profile,
    /// The panel title.
    pub title: &'static str,
}

/// Every known algorithm. Any other name is a user's own algorithm (see [`Algo::Other`]).
pub const ALGOS: &[AlgoSpec] = &[
    AlgoSpec {
        name: "sac",
        aliases: &[],
        log_name: "sac",
        profile: Profile::SacFamily,
        title: "SAC",
    },
    AlgoSpec {
        name: "flashsac",
        aliases: &["flash_sac"],
        log_name: "flash_sac",
        profile: Profile::SacFamily,
        title: "FlashSAC",
    },
    AlgoSpec {
        name: "warpsac",
        aliases: &["warp_sac"],
        log_name: "warp_sac",
        profile: Profile::SacFamily,
        title: "WarpSAC",
    },
    AlgoSpec {
        name: "fast_sac",
        aliases: &[],
        log_name: "fast_sac",
        profile: Profile::SacFamily,
        title: "FAST_SAC",
    },
    AlgoSpec {
        name: "appo",
        aliases: &[],
        log_name: "appo",
        profile: Profile::Appo,
        title: "APPO",
    },
    AlgoSpec {
        name: "ppo",
        aliases: &["rsl_rl_ppo"],
        log_name: "rsl_rl_ppo",
        profile: Profile::OnPolicy,
        title: "PPO",
    },
    AlgoSpec {
        name: "grpo",
        aliases: &[],
        log_name: "grpo",
        profile: Profile::Rft,
        title: "GRPO",
    },
];

/// An algorithm name as a runner gave it: a known algorithm or the user's own.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Algo {
    /// One of [`ALGOS`].
    Known(&'static AlgoSpec),
    /// A name tally has no facts about, kept as given.
    Other(String),
}

impl Algo {
    /// Resolve `name` (case-insensitive; aliases included). Never fails: an unknown name is
    /// [`Algo::Other`].
    pub fn parse(name: &str) -> Algo {
        let lower = name.to_ascii_lowercase();
        ALGOS
            .iter()
            .find(|a| a.name == lower || a.aliases.contains(&lower.as_str()))
            .map_or_else(|| Algo::Other(name.to_owned()), Algo::Known)
    }

    /// The known algorithm's facts, if it is one.
    pub fn spec(&self) -> Option<&'static AlgoSpec> {
        match self {
            Algo::Known(s) => Some(s),
            Algo::Other(_) => None,
        }
    }

    /// The canonical name of a known algorithm, else the name as given.
    pub fn name(&self) -> &str {
        match self {
            Algo::Known(s) => s.name,
            Algo::Other(n) => n,
        }
    }

    /// The run directory's `algo_log_name`: the table's, else the name lower-cased.
    pub fn log_name(&self) -> Cow<'static, str> {
        match self {
            Algo::Known(s) => Cow::Borrowed(s.log_name),
            Algo::Other(n) => Cow::Owned(n.to_ascii_lowercase()),
        }
    }

    /// The timing profile of a known algorithm.
    pub fn profile(&self) -> Option<Profile> {
        self.spec().map(|s| s.profile)
    }

    /// The panel title: the table's, else the name upper-cased.
    pub fn title(&self) -> Cow<'static, str> {
        match self {
            Algo::Known(s) => Cow::Borrowed(s.title),
            Algo::Other(n) => Cow::Owned(n.to_uppercase()),
        }
    }
}

impl std::fmt::Display for Algo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_aliases_resolve_case_insensitively() {
        assert_eq!(Algo::parse("FlashSAC").name(), "flashsac");
        assert_eq!(Algo::parse("flash_sac").log_name(), "flash_sac");
        assert_eq!(Algo::parse("PPO").log_name(), "rsl_rl_ppo");
        assert_eq!(Algo::parse("rsl_rl_ppo").profile(), Some(Profile::OnPolicy));
        assert_eq!(Algo::parse("warpsac").title(), "WarpSAC");
        assert_eq!(Algo::parse("grpo").profile(), Some(Profile::Rft));
    }

    #[test]
    fn unknown_names_are_kept_as_given() {
        let a = Algo::parse("MyAlgo");
        assert_eq!(a, Algo::Other("MyAlgo".into()));
        assert_eq!(a.log_name(), "myalgo");
        assert_eq!(a.title(), "MYALGO");
        assert_eq!(a.profile(), None);
    }

    #[test]
    fn no_two_entries_share_a_spelling() {
        let mut all: Vec<&str> = ALGOS
            .iter()
            .flat_map(|a| std::iter::once(a.name).chain(a.aliases.iter().copied()))
            .collect();
        let n = all.len();
        all.sort_unstable();
        all.dedup();
        assert_eq!(all.len(), n);
    }
}
