from pathlib import Path

import pytest

from localagent.config.userconfig import config_path, load_settings
from localagent.system.errors import UsageError


def write_config(text: str) -> Path:
    path = config_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_defaults_match_the_spec() -> None:
    s = load_settings()
    assert s.ollama_host == "http://127.0.0.1:11434"
    assert s.model == "gpt-oss:20b"
    assert (s.temperature, s.max_rounds, s.history_keep, s.num_ctx) == (0.2, 24, 5, 8192)
    assert s.allowed_commands == ("python", "pytest", "ruff", "pip")
    assert s.retry_deadline == 300
    assert (s.backend, s.base_url) == ("ollama", "http://127.0.0.1:8080/v1")


def test_the_backend_and_its_url_come_from_the_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("LOCALAGENT_BACKEND", "openai")
    monkeypatch.setenv("LOCALAGENT_BASE_URL", "http://gpu-box:8000/v1")
    monkeypatch.setenv("LOCALAGENT_API_KEY", "sk-secret")
    s = load_settings()
    assert (s.backend, s.base_url) == ("openai", "http://gpu-box:8000/v1")
    assert "sk-secret" not in repr(s.model_dump())
    monkeypatch.setenv("LOCALAGENT_BACKEND", "vllm")
    with pytest.raises(UsageError, match="LOCALAGENT_BACKEND"):
        load_settings()
    monkeypatch.setenv("LOCALAGENT_BACKEND", "openai")
    monkeypatch.setenv("LOCALAGENT_BASE_URL", "127.0.0.1:port")
    with pytest.raises(UsageError, match=r"LOCALAGENT_BASE_URL.*8080/v1"):
        load_settings()


def test_precedence_flag_over_env_over_file_over_default(monkeypatch: pytest.MonkeyPatch) -> None:
    write_config('model = "from-file"\nmax_rounds = 7\nnum_ctx = 4096\n')
    assert load_settings().model == "from-file"
    monkeypatch.setenv("OLLAMA_MODEL", "from-env")
    monkeypatch.setenv("LOCALAGENT_MAX_ROUNDS", "9")
    s = load_settings(model="from-flag", max_rounds=None)
    assert (s.model, s.max_rounds, s.num_ctx, s.temperature) == ("from-flag", 9, 4096, 0.2)


def test_allowed_commands_comma_list(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LOCALAGENT_ALLOWED_COMMANDS", " python, node ,,make")
    assert load_settings().allowed_commands == ("python", "node", "make")


def test_bad_env_value_names_the_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LOCALAGENT_MAX_ROUNDS", "lots")
    with pytest.raises(UsageError, match=r"LOCALAGENT_MAX_ROUNDS.*environment"):
        load_settings()


def test_unknown_key_in_config_file_is_refused() -> None:
    write_config('modle = "typo"\n')
    with pytest.raises(UsageError, match="unknown setting 'modle'"):
        load_settings()


def test_broken_toml_is_a_clear_error() -> None:
    path = write_config("model = \n")
    with pytest.raises(UsageError, match=str(path.name)):
        load_settings()


def test_a_binary_config_file_is_a_clear_usage_error(isolated_home: Path) -> None:
    path = isolated_home / "config" / "config.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"\xff\xfe\x00binary")
    with pytest.raises(UsageError, match="cannot read the config file"):
        load_settings()


@pytest.mark.parametrize("host", ["http://[::1", "127.0.0.1:notaport", "ftp://127.0.0.1"])
def test_a_bad_ollama_host_is_a_clear_usage_error(
    host: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OLLAMA_HOST", host)
    with pytest.raises(UsageError, match="OLLAMA_HOST"):
        load_settings()


def test_checks_come_from_the_config_file_and_flags_win() -> None:
    write_config('checks = ["python -m pytest -q"]\n')
    assert load_settings().checks == ("python -m pytest -q",)
    assert load_settings(checks=("ruff check .",)).checks == ("ruff check .",)
    assert load_settings(verify=False).verify is False


def test_a_check_that_is_not_a_command_is_a_usage_error() -> None:
    write_config("checks = [1, 2]\n")
    with pytest.raises(UsageError, match="checks"):
        load_settings()
