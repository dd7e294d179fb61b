from localagent.loopguard import check, explain, signature
from localagent.state import GuardState


def run(guard: GuardState, sig: str, changed: bool = False) -> None:
    guard.window.append((sig, guard.epoch))
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
