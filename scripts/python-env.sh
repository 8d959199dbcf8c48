# Sourced by scripts/test and scripts/serve: make .venv and install the project into it.
# Expects ROOT, VENV, PY and the say/die functions; PYTHON picks the interpreter (default python3).
# The install is skipped while pyproject.toml is unchanged (its hash is kept in the venv).
if [ ! -x "$PY" ]; then
    say "creating .venv"
    "${PYTHON:-python3}" -m venv "$VENV"
fi
STAMP="$VENV/.manifest-install-stamp"
WANT="$(sha256sum "$ROOT/pyproject.toml" | cut -d' ' -f1)"
if [ ! -f "$STAMP" ] || [ "$(cat "$STAMP")" != "$WANT" ]; then
    say "installing .[test] into .venv"
    PIP_LOG="$VENV/.manifest-pip.log"
    if ! (cd "$ROOT" && "$PY" -m pip install --disable-pip-version-check -e '.[test]' \
            </dev/null >"$PIP_LOG" 2>&1); then
        tail -n 40 "$PIP_LOG" >&2
        die "pip install failed (full log: $PIP_LOG)"
    fi
    printf '%s\n' "$WANT" > "$STAMP"
fi
