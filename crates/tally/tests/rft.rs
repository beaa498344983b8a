//! The `rft` profile: Trinity-style keys validated by the `{category}/...` naming convention
//! (docs/contract/rft.md), persisted as given on the iteration axis.

use tally::{Backend, Error, Logger, LoggerConfig, MemorySink, Profile, RunStatus, StepInput};

#[path = "support/memory_logger.rs"]
mod memory_logger;
use memory_logger::memory_logger;

fn logger() -> (tempfile::TempDir, Logger, MemorySink) {
    let dir = tempfile::tempdir().unwrap();
    let mut c = LoggerConfig::new("grpo", "gsm8k", "none");
    c.log_dir = Some(dir.path().join("run"));
    c.profile = Profile::Rft;
    c.max_iterations = Some(10);
    c.backend = Backend::None;
    let (log, mem, _) = memory_logger(c, 0.0);
    (dir, log, mem)
}

#[test]
fn trinity_step_keys_are_persisted_as_given_on_the_iteration_axis() {
    let (_d, mut log, mem) = logger();
    let step = StepInput::new(3)
        .env_steps(999)
        .metric("rollout/accuracy/mean", 0.83)
        .metric("eval/gsm8k-eval/accuracy/mean@4", 0.5)
        .metric("eval/gsm8k-eval/accuracy/best@2", 0.7)
        .metric("time/update_actor", 1.5);
    log.step(&step).unwrap();
    log.close(RunStatus::Completed).unwrap();
    let s = &mem.steps()[0];
    assert_eq!(s.step, 3, "rft runs use the step (iteration) axis");
    let tags: Vec<_> = s
        .scalars
        .iter()
        .map(|(t, v)| (t.as_str().to_owned(), *v))
        .collect();
    assert_eq!(
        tags,
        [
            ("rollout/accuracy/mean".to_owned(), 0.83),
            ("eval/gsm8k-eval/accuracy/mean@4".to_owned(), 0.5),
            ("eval/gsm8k-eval/accuracy/best@2".to_owned(), 0.7),
            ("time/update_actor".to_owned(), 1.5)
        ]
    );
}

#[test]
fn rl_tags_suffixes_and_rl_inputs_are_rejected_naming_the_key() {
    let (_d, mut log, mem) = logger();
    let cases = [
        (
            StepInput::new(1).metric("Loss/critic", 1.0),
            "unknown category 'Loss/'",
        ),
        (
            StepInput::new(1).metric("rollout/total_tokens:sum", 1.0),
            "aggregation suffix",
        ),
        (
            StepInput::new(1).metric("eval/gsm8k/accuracy", 1.0),
            "<statistic>",
        ),
        (
            StepInput::new(1).learner("learning", 0.1),
            "no RL timelines",
        ),
        (StepInput::new(1).episode_return(1.0), "no RL timelines"),
        (
            StepInput::new(1)
                .metric("time/a", 1.0)
                .metric("time/a", 2.0),
            "duplicate",
        ),
    ];
    for (input, needle) in cases {
        match log.step(&input) {
            Err(e @ Error::InvalidStep { .. }) => {
                assert!(e.to_string().contains(needle), "'{e}' lacks '{needle}'")
            }
            other => panic!("{needle}: {other:?}"),
        }
    }
    log.step(&StepInput::new(1).metric("time/a", 1.0)).unwrap();
    log.flush().unwrap();
    assert_eq!(mem.steps().len(), 1);
}
