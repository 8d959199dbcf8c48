# Sourced by scripts/test and scripts/serve: make .venv and install the project into it.
# Expects ROOT, VENV, PY and the say/die functions; PYTHON picks the interpreter (default python3).
# EXTRAS names the optional dependencies to add ("" for scripts/serve: the runtime only; "test"
# for scripts/test: pytest, mypy, ruff, Playwright, Schemathesis...).
# The install is skipped while pyproject.toml is unchanged and the extras installed cover
# EXTRAS (a .venv made by scripts/test also serves; one made by scripts/serve gets the test
# tools added the first time scripts/test runs). The stamp in the venv keeps the hash and extras.
EXTRAS="${EXTRAS:-}"
if [ ! -x "$PY" ]; then
    say "creating .venv"
    "${PYTHON:-python3}" -m venv "$VENV"
fi
STAMP="$VENV/.manifest-install-stamp"
WANT="$(sha256sum "$ROOT/pyproject.toml" | cut -d' ' -f1)"
HAVE_HASH=""; HAVE_EXTRAS=""
if [ -f "$STAMP" ]; then
    read -r HAVE_HASH HAVE_EXTRAS < "$STAMP" || true
fi
if [ "$HAVE_HASH" != "$WANT" ] || { [ -n "$EXTRAS" ] && [ "$HAVE_EXTRAS" != "$EXTRAS" ]; }; then
    SPEC="."
    [ -n "$EXTRAS" ] && SPEC=".[$EXTRAS]"
    say "installing $SPEC into .venv"
    PIP_LOG="$VENV/.manifest-pip.log"
    if ! (cd "$ROOT" && "$PY" -m pip install --disable-pip-version-check -e "$SPEC" \
            </dev/null >"$PIP_LOG" 2>&1); then
        tail -n 40 "$PIP_LOG" >&2
        die "pip install failed (full log: $PIP_LOG)"
    fi
    printf '%s %s\n' "$WANT" "$EXTRAS" > "$STAMP"
fi
