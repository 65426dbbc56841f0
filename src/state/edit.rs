//! Changing state by hand, safely: adding an imported resource (`kbp import`), forgetting resources (`kbp state rm`), renaming addresses (`kbp state mv`),
//! replacing the whole document (`kbp state push`) and moving it between backends (`kbp state migrate`). Each
//! refuses what would lose state or mix up two stacks, unless forced.

use std::time::Duration;

use super::backend::{Backend, StateError};
use super::{ResourceState, State};
use crate::graph::Address;

fn refused(message: String, hint: &str) -> StateError {
    StateError::Refused { message, hint: hint.to_string() }
}

fn not_in_state(state: &State, address: &Address) -> StateError {
    let wanted = address.to_string();
    let close = state
        .resources
        .keys()
        .map(|k| k.to_string())
        .filter(|k| strsim::levenshtein(k, &wanted) <= wanted.len() / 3 + 2)
        .min_by_key(|k| strsim::levenshtein(k, &wanted));
    let hint = match close {
        Some(k) => format!("did you mean {k}? `kbp state list` shows every address"),
        None => "`kbp state list` shows every address".to_string(),
    };
    StateError::Refused { message: format!("{address} is not in state"), hint }
}

/// Forgets `addresses` (all or none): kbp stops managing them; what they name in AWS is left as it is.
pub fn remove(state: &mut State, addresses: &[Address]) -> Result<Vec<ResourceState>, StateError> {
    if let Some(missing) = addresses.iter().find(|a| !state.resources.contains_key(a)) {
        return Err(not_in_state(state, missing));
    }
    let removed: Vec<ResourceState> = addresses.iter().filter_map(|a| state.resources.remove(a)).collect();
    for r in state.resources.values_mut() {
        r.dependencies.retain(|d| !addresses.contains(d));
    }
    Ok(removed)
}

/// Adds `entry` (`kbp import`): refused when its address is already in state, which it would overwrite.
pub fn insert(state: &mut State, entry: ResourceState) -> Result<(), StateError> {
    if let Some(existing) = state.resources.get(&entry.address) {
        return Err(refused(
            format!("{} is already in state ({})", entry.address, existing.id.as_deref().unwrap_or("-")),
            "`kbp state rm` it first if it is really to be replaced",
        ));
    }
    state.resources.insert(entry.address.clone(), entry);
    Ok(())
}

/// Renames `from` to `to`, in the entry and wherever another entry depends on it.
pub fn rename(state: &mut State, from: &Address, to: &Address) -> Result<(), StateError> {
    if state.resources.contains_key(to) {
        return Err(refused(
            format!("{to} is already in state"),
            "`kbp state rm` it first if it is really to be replaced",
        ));
    }
    let Some(mut entry) = state.resources.remove(from) else { return Err(not_in_state(state, from)) };
    entry.address = to.clone();
    state.resources.insert(to.clone(), entry);
    for r in state.resources.values_mut() {
        for d in r.dependencies.iter_mut().filter(|d| *d == from) {
            *d = to.clone();
        }
    }
    Ok(())
}

/// Whether `pushed` may replace `current`: same stack and lineage, and newer, unless `force`.
pub fn check_push(current: Option<&State>, pushed: &State, force: bool) -> Result<(), StateError> {
    let Some(current) = current else { return Ok(()) };
    if force {
        return Ok(());
    }
    let hint = "pull the current state (`kbp state pull`) and compare; --force replaces it anyway";
    if pushed.stack != current.stack {
        return Err(refused(
            format!("the file holds stack `{}`, the destination stack `{}`", pushed.stack, current.stack),
            hint,
        ));
    }
    if pushed.lineage != current.lineage {
        return Err(refused(
            format!(
                "the file is of another lineage ({}) than the destination ({}): it is another state of the same name",
                pushed.lineage, current.lineage
            ),
            hint,
        ));
    }
    if pushed.serial < current.serial {
        return Err(refused(
            format!("the file is older (serial {}) than the destination (serial {})", pushed.serial, current.serial),
            hint,
        ));
    }
    if pushed.serial == current.serial && pushed != current {
        return Err(refused(format!("the file and the destination differ at the same serial {}", pushed.serial), hint));
    }
    Ok(())
}

/// Moves the state from `from` to `to` with both locked: written at `to` as it is (serial and lineage kept),
/// read back, then `from` is replaced by a pointer to `to`. If any step fails before the pointer, `from` still
/// holds the state.
pub async fn migrate(
    from: &dyn Backend,
    to: &dyn Backend,
    force: bool,
    timeout: Duration,
) -> Result<State, StateError> {
    if from.location().same_place(to.location()) {
        return Err(refused(format!("the state is already at {}", to.describe()), "name another destination"));
    }
    let from_lock = from.lock("state migrate", timeout).await?;
    let to_lock = to.lock("state migrate", timeout).await?;
    let result = async {
        let Some(state) = from.load().await? else {
            return Err(refused(
                format!("there is no state at {}", from.describe()),
                "pass --state or -f BLUEPRINT for the state to move",
            ));
        };
        let existing = match to.load().await {
            Ok(existing) => existing,
            // A pointer left by an earlier migration away from `to` is no state: moving back is fine.
            Err(StateError::Moved { .. }) => None,
            Err(e) => return Err(e),
        };
        if let Some(existing) = &existing {
            if !force && existing != &state {
                return Err(refused(
                    format!(
                        "{} already holds a state (stack `{}`, serial {}, lineage {})",
                        to.describe(),
                        existing.stack,
                        existing.serial,
                        existing.lineage
                    ),
                    "choose another key, or pass --force to replace it (its versions stay in a versioned bucket)",
                ));
            }
        }
        to.persist(&state).await?;
        let written = to.load().await?;
        if written.as_ref() != Some(&state) {
            return Err(refused(
                format!("{} did not read back as written", to.describe()),
                "nothing was retired at the source; run the migration again",
            ));
        }
        from.retire(to.location()).await?;
        Ok(state)
    }
    .await;
    to_lock.release().await?;
    from_lock.release().await?;
    result
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::state::{LocalBackend, Status};

    fn entry(address: &str, deps: &[&str]) -> ResourceState {
        ResourceState {
            address: address.parse().unwrap(),
            kind: "aws_vpc".into(),
            id: Some(format!("id-{address}")),
            status: Status::Ready,
            attributes: Default::default(),
            outputs: Default::default(),
            dependencies: deps.iter().map(|d| d.parse().unwrap()).collect(),
            imported: false,
            address_tag: crate::state::AddressTag::Path,
        }
    }

    fn sample() -> State {
        let mut s = State::new("demo", "us-west-2");
        for r in [entry("vpc.main", &[]), entry("subnet.private[\"a\"]", &["vpc.main"])] {
            s.resources.insert(r.address.clone(), r);
        }
        s
    }

    fn a(text: &str) -> Address {
        text.parse().unwrap()
    }

    #[test]
    fn remove_is_all_or_nothing_and_names_the_closest_address() {
        let mut s = sample();
        let e = remove(&mut s, &[a("vpc.main"), a("vpc.mian2")]).unwrap_err().to_string();
        assert!(e.contains("vpc.mian2 is not in state") && e.contains("did you mean vpc.main"), "{e}");
        assert_eq!(s.resources.len(), 2, "nothing removed on refusal");
        let gone = remove(&mut s, &[a("vpc.main")]).unwrap();
        assert_eq!(gone[0].id.as_deref(), Some("id-vpc.main"));
        assert!(s.resources[&a("subnet.private[\"a\"]")].dependencies.is_empty());
    }

    #[test]
    fn rename_moves_the_entry_and_its_dependents_and_refuses_a_taken_address() {
        let mut s = sample();
        let e = rename(&mut s, &a("vpc.main"), &a("subnet.private[\"a\"]")).unwrap_err().to_string();
        assert!(e.contains("already in state"), "{e}");
        rename(&mut s, &a("vpc.main"), &a("vpc.shared")).unwrap();
        assert_eq!(s.resources[&a("vpc.shared")].address, a("vpc.shared"));
        assert_eq!(s.resources[&a("subnet.private[\"a\"]")].dependencies, vec![a("vpc.shared")]);
        assert!(rename(&mut s, &a("vpc.main"), &a("vpc.x")).unwrap_err().to_string().contains("not in state"));
    }

    #[test]
    fn insert_adds_an_entry_but_never_over_one() {
        let mut s = sample();
        insert(&mut s, entry("vpc.other", &[])).unwrap();
        assert_eq!(s.resources[&a("vpc.other")].id.as_deref(), Some("id-vpc.other"));
        let e = insert(&mut s, ResourceState { id: Some("x".into()), ..entry("vpc.main", &[]) }).unwrap_err();
        assert!(e.to_string().contains("vpc.main is already in state (id-vpc.main)"), "{e}");
        assert_eq!(s.resources[&a("vpc.main")].id.as_deref(), Some("id-vpc.main"));
    }

    #[test]
    fn push_refuses_another_stack_lineage_an_older_serial_or_a_different_twin() {
        let current = State { serial: 5, ..sample() };
        let newer = State { serial: 6, ..current.clone() };
        assert!(check_push(Some(&current), &newer, false).is_ok());
        assert!(check_push(None, &newer, false).is_ok());
        let cases = [
            (State { stack: "other".into(), ..newer.clone() }, "stack `other`"),
            (State { lineage: "x".into(), ..newer.clone() }, "another lineage"),
            (State { serial: 4, ..current.clone() }, "older (serial 4)"),
            (State { region: "eu-west-1".into(), ..current.clone() }, "differ at the same serial 5"),
        ];
        for (pushed, says) in cases {
            let e = check_push(Some(&current), &pushed, false).unwrap_err().to_string();
            assert!(e.contains(says) && e.contains("--force"), "{says}: {e}");
            assert!(check_push(Some(&current), &pushed, true).is_ok());
        }
    }

    #[tokio::test]
    async fn migrate_keeps_serial_and_lineage_and_leaves_a_pointer() {
        let dir = tempfile::tempdir().unwrap();
        let from = LocalBackend::new(dir.path().join("a.json"));
        let to = LocalBackend::new(dir.path().join("b.json"));
        let s = State { serial: 7, ..sample() };
        from.persist(&s).await.unwrap();
        let moved = migrate(&from, &to, false, Duration::ZERO).await.unwrap();
        assert_eq!(moved, s);
        assert_eq!(to.load().await.unwrap().unwrap(), s);
        assert!(matches!(from.load().await, Err(StateError::Moved { .. })));
        // And back: the pointer at the old place does not count as a state in the way.
        let back = migrate(&to, &from, false, Duration::ZERO).await.unwrap();
        assert_eq!((back.serial, back.lineage), (7, s.lineage.clone()));
        // Onto another state: refused unless forced.
        let other = LocalBackend::new(dir.path().join("c.json"));
        other.persist(&State::new("demo", "us-west-2")).await.unwrap();
        let e = migrate(&from, &other, false, Duration::ZERO).await.unwrap_err().to_string();
        assert!(e.contains("already holds a state"), "{e}");
        assert_eq!(from.load().await.unwrap().unwrap(), s, "the source is untouched after a refusal");
    }
}
