from localagent.loopguard import check, explain, signature
from localagent.state import Attempt, GuardState


def run(guard: GuardState, sig: str, changed: bool = False, obs: str = "") -> None:
    guard.window.append(Attempt(sig=sig, epoch=guard.epoch, obs=obs))
    if changed:
        guard.epoch += 1


def test_signature_is_canonical() -> None:
    assert signature("t", {"b": 1, "a": [2]}) == signature("t", {"a": [2], "b": 1})
    assert signature("t", {"a": 1}) != signature("u", {"a": 1})


def test_third_identical_attempt_is_blocked() -> None:
    guard = GuardState()
    sig = signature("run_cmd", {"cmd": "pytest"})
    assert check(guard, sig) is None
    run(guard, sig)
    assert check(guard, sig) is None
    run(guard, sig)
    block = check(guard, sig)
    assert block is not None and block.pattern == "repeat" and block.count == 3
    assert "run_cmd" in explain(block) and "BLOCKED" in explain(block)


def test_repeat_after_a_workspace_change_is_progress() -> None:
    guard = GuardState()
    test, edit = signature("run_cmd", {"cmd": "pytest"}), signature("write_file", {"path": "a"})
    for _ in range(5):
        assert check(guard, test) is None
        run(guard, test)
        assert check(guard, edit) is None
        run(guard, edit, changed=True)


def test_alternating_pattern_is_blocked() -> None:
    guard = GuardState()
    a, b = signature("read_file", {"path": "a"}), signature("list_dir", {"path": "."})
    run(guard, a)
    run(guard, b)
    run(guard, a)
    block = check(guard, b)
    assert block is not None and block.pattern == "alternating"
    assert "alternating" in explain(block)


def test_only_the_last_ten_actions_count() -> None:
    guard = GuardState()
    sig = signature("list_dir", {"path": "."})
    run(guard, sig)
    run(guard, sig)
    for i in range(10):
        run(guard, signature("read_file", {"path": str(i)}))
    guard.window = guard.window[-10:]
    assert check(guard, sig) is None


def test_same_action_and_observation_four_times_is_blocked_even_across_changes() -> None:
    guard = GuardState()
    sig = signature("run_cmd", {"cmd": "python gen.py"})
    for _ in range(3):
        assert check(guard, sig) is None
        run(guard, sig, changed=True, obs="same")  # it touches a file every time
    block = check(guard, sig)
    assert block is not None and block.pattern == "repeat" and block.count == 4


def test_a_changing_observation_is_progress() -> None:
    guard = GuardState()
    sig = signature("run_cmd", {"cmd": "python gen.py"})
    for i in range(6):
        assert check(guard, sig) is None
        run(guard, sig, changed=True, obs=f"out{i}")


def test_three_abab_cycles_with_identical_observations_are_blocked() -> None:
    guard = GuardState()
    a = signature("run_cmd", {"cmd": "python gen.py"})
    b = signature("run_cmd", {"cmd": "python check.py"})
    for _ in range(2):
        run(guard, a, changed=True, obs="gen")
        run(guard, b, changed=True, obs="check")
    run(guard, a, changed=True, obs="gen")
    block = check(guard, b)
    assert block is not None and block.pattern == "alternating"


def test_abab_that_changes_the_workspace_with_new_output_is_progress() -> None:
    guard = GuardState()
    a = signature("run_cmd", {"cmd": "python gen.py"})
    b = signature("run_cmd", {"cmd": "python check.py"})
    for i in range(4):
        assert check(guard, a) is None
        run(guard, a, changed=True, obs=f"gen{i}")
        assert check(guard, b) is None
        run(guard, b, changed=True, obs="check")
