"""``cuewrap phone`` (docs/phone.md) against the local ntfy stand-in (tests/ntfystand.py): from
an empty config to a test round trip, the QR code it prints decoded back (zbarimg) to the link
of the topic it saved, ``--check``, and the refused topics."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest
from ntfystand import NtfyStandIn
from shared import system_tool

from cuewrap import ntfy

pytestmark = pytest.mark.pty

ANSI = re.compile(rb"\x1b\[[0-9;]*m")


def env_for(tmp_path: Path, **more: str) -> dict[str, str]:
    return {"PATH": os.environ["PATH"], "HOME": str(tmp_path),
            "XDG_CONFIG_HOME": str(tmp_path / "config"), **more}  # fmt: skip


def phone_on(tmp_path: Path, stand: NtfyStandIn, token: str, reply_token: str) -> dict[str, str]:
    """The phone set up by hand (the environment), with these two access tokens."""
    return env_for(tmp_path, CUEWRAP_PHONE_ENABLED="true", CUEWRAP_PHONE_NTFY_SERVER=stand.url,
                   CUEWRAP_PHONE_TOPIC="cuewrap-test-Hq7PzL2mXw9",
                   CUEWRAP_PHONE_REPLY_TOPIC="cuewrap-test-Vb3NcR8kTy4",
                   CUEWRAP_PHONE_TOKEN=token, CUEWRAP_PHONE_REPLY_TOKEN=reply_token)  # fmt: skip


def phone(env: dict[str, str], *args: str, **kw: Any) -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-m", "cuewrap", "phone", *args], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, **kw)  # fmt: skip


def qr_image(out: bytes, path: Path) -> Path:
    """The QR code as printed (half blocks, two modules a character) drawn as a PBM image."""
    rows = []
    for line in out.split(b"\n"):
        if b"\x1b[30;47m" not in line:
            continue
        text = ANSI.sub(b"", line).decode()
        top = [c in "▀█" for c in text]
        bottom = [c in "▄█" for c in text]
        rows += [top, bottom]
    assert rows, out
    scale = 4
    pixels = []
    for row in rows:
        line = " ".join("1" if dark else "0" for dark in row for _ in range(scale))
        pixels += [line] * scale
    width = len(rows[0]) * scale
    path.write_text(f"P1\n{width} {len(pixels)}\n" + "\n".join(pixels) + "\n")
    return path


def test_from_an_empty_config_to_a_round_trip(tmp_path: Path) -> None:
    zbarimg = system_tool("zbarimg")
    if zbarimg is None:  # scripts/install-test-deps installs it (zbar-tools)
        pytest.fail("zbarimg is missing: scripts/install-test-deps installs zbar-tools")
    with NtfyStandIn() as stand:
        env = env_for(tmp_path)
        p = phone(env, "--server", stand.url, "--wait", "30")
        try:
            assert p.stdout is not None
            out = b""
            while b"tap its Test button" not in out:
                line = p.stdout.readline()
                assert line, out
                out += line
            config = tomllib.loads((tmp_path / "config" / "cuewrap" / "config.toml").read_text())
            saved = config["phone"]
            topic, reply = saved["topic"], saved["reply_topic"]
            assert saved["enabled"] is True and not ntfy.check_topic(topic)
            assert not ntfy.check_topic(reply) and topic != reply
            assert saved["ntfy_server"] == stand.url
            # what the user sees: the QR code decodes to the link of the topic saved
            link = f"ntfy://127.0.0.1:{stand.url.rsplit(':', 1)[1]}/{topic}?secure=false"
            assert link.encode() in out
            image = qr_image(out, tmp_path / "qr.pbm")
            decoded = subprocess.run([zbarimg, "--quiet", "--raw", str(image)],
                                     capture_output=True, timeout=30)  # fmt: skip
            assert decoded.stdout.decode().strip() == link, decoded
            [test] = stand.published(topic)
            assert [b["label"] for b in test["actions"]] == ["Test"]
            assert stand.tap(test, "Test") == 200
            rest, _ = p.communicate(timeout=30)
        finally:
            if p.poll() is None:
                p.kill()
                p.wait()
        assert p.returncode == 0, out + rest
        assert b"the button's answer came back after" in rest
        told = [m["message"] for m in stand.current(topic)]
        assert told and told[0].startswith("Answered: Test"), told
        # --check: the server, reading, and this round trip
        done = subprocess.run([sys.executable, "-m", "cuewrap", "phone", "--check"], env=env,
                              capture_output=True, text=True, timeout=30)  # fmt: skip
        assert done.returncode == 0, done.stdout + done.stderr
        assert f"server {stand.url}: reachable" in done.stdout
        assert "reading the reminders' topic without an access token: works" in done.stdout
        assert "last round trip: " in done.stdout and "no round trip" not in done.stdout


def test_check_warns_when_the_buttons_token_reads_the_reminders(tmp_path: Path) -> None:
    with NtfyStandIn(token="tk_both") as stand:
        env = phone_on(tmp_path, stand, "tk_both", "tk_both")
        done = subprocess.run([sys.executable, "-m", "cuewrap", "phone", "--check"], env=env,
                              capture_output=True, text=True, timeout=30)  # fmt: skip
        assert "with the access token: works" in done.stdout, done.stdout
        assert "WARNING: phone.reply_token" in done.stdout
        stand.write_only["tk_write"] = {"cuewrap-test-Vb3NcR8kTy4"}
        env["CUEWRAP_PHONE_REPLY_TOKEN"] = "tk_write"
        done = subprocess.run([sys.executable, "-m", "cuewrap", "phone", "--check"], env=env,
                              capture_output=True, text=True, timeout=30)  # fmt: skip
        assert "cannot read the reminders (good)" in done.stdout, done.stdout
        stand.mode = "down"
        done = subprocess.run([sys.executable, "-m", "cuewrap", "phone", "--check"], env=env,
                              capture_output=True, text=True, timeout=30)  # fmt: skip
        assert done.returncode == 1 and "FAIL: not reachable" in done.stdout


@pytest.mark.parametrize("name", ["my-topic-change-me", "alerts", "aaaaaaaaaaaaaaaaaaaa"])
def test_guessable_topics_are_refused(tmp_path: Path, name: str) -> None:
    env = env_for(tmp_path)
    done = subprocess.run([sys.executable, "-m", "cuewrap", "phone", "--topic", name,
                           "--no-test"], env=env, capture_output=True, text=True,
                          timeout=30)  # fmt: skip
    assert done.returncode == 2
    assert "placeholder" in done.stderr or "guessable" in done.stderr, done.stderr
    assert not (tmp_path / "config" / "cuewrap" / "config.toml").exists()
    # and set by hand: the settings are refused (as cuewrap pi refuses to start with them)
    env["CUEWRAP_PHONE_TOPIC"] = name
    done = subprocess.run([sys.executable, "-m", "cuewrap", "config", "list"], env=env,
                          capture_output=True, text=True, timeout=30)  # fmt: skip
    assert done.returncode == 2 and "CUEWRAP_PHONE_TOPIC" in done.stderr, done.stderr


def test_listings_never_show_an_access_token(tmp_path: Path) -> None:
    with NtfyStandIn() as stand:
        env = phone_on(tmp_path, stand, "tk_Secret1", "tk_Secret2")
        for args in (["config", "list"], ["doctor"]):
            done = subprocess.run([sys.executable, "-m", "cuewrap", *args], env=env,
                                  capture_output=True, text=True, timeout=60)  # fmt: skip
            assert re.search(r"phone\.token\s+\(set\)", done.stdout), done.stdout
            assert "tk_Secret" not in done.stdout + done.stderr
        assert f"phone: server {stand.url}: reachable" in done.stdout  # doctor's phone lines
