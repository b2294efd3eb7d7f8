#!/usr/bin/env bash
# Checks HTTPS from the outside: starts the `tls` example (a self-signed certificate) and runs
# curl, openssl s_client and, when installed, testssl against it. Prints one line per check and
# exits non-zero if any failed.
#
#   conformance/tls_check.sh            # port 18443, or PORT=... to choose
set -uo pipefail
cd "$(dirname "$0")/.."
PORT=${PORT:-18443}
ADDR=127.0.0.1:$PORT
TARGET=${CARGO_TARGET_DIR:-target}
WORK=$(mktemp -d)
failures=0

pass() { echo "PASS  $1"; }
fail() { echo "FAIL  $1"; failures=$((failures + 1)); }
check() { # check NAME COMMAND...: passes if the command succeeds
    local name=$1; shift
    if "$@" > "$WORK/out" 2>&1; then pass "$name"; else fail "$name"; sed 's/^/      /' "$WORK/out" | tail -5; fi
}

cargo build --release -q -p vireo --example tls || exit 1
"$TARGET/release/examples/tls" --addr "$ADDR" --workers 2 > "$WORK/server.log" 2>&1 &
server=$!
cleanup() { kill -TERM "$server" 2> /dev/null; wait "$server" 2> /dev/null; rm -rf "$WORK"; }
trap cleanup EXIT
for _ in $(seq 100); do
    grep -q "listening on" "$WORK/server.log" && break
    sleep 0.1
done
grep -q "listening on https://$ADDR" "$WORK/server.log" || { cat "$WORK/server.log"; exit 1; }

URL=https://$ADDR
body() { curl --http1.1 -k -sS --max-time 10 "$@"; }
s_client() { timeout 10 openssl s_client -connect "$ADDR" -servername localhost "$@" < /dev/null 2>&1; }

echo "== curl"
check "curl --http1.1 -k: Hello, World!" test "$(body "$URL/")" = "Hello, World!"
check "the request is secure" test "$(body "$URL/scheme")" = "https"
check "curl over TLS 1.3" test "$(body --tlsv1.3 "$URL/")" = "Hello, World!"
check "curl over TLS 1.2 only" test "$(body --tlsv1.2 --tls-max 1.2 "$URL/")" = "Hello, World!"
check "keep-alive: two requests on one connection" \
    sh -c "curl --http1.1 -k -sS -v '$URL/' '$URL/json' 2>&1 | grep -q 'Re-using existing'"
check "plain HTTP to the TLS port gets no HTTP answer" \
    sh -c "! curl -sS --max-time 5 'http://$ADDR/' 2> /dev/null | grep -q Hello"
check "still serving after plain HTTP" test "$(body "$URL/")" = "Hello, World!"

echo "== openssl s_client"
check "ALPN http/1.1 negotiated" sh -c "$(declare -f s_client); ADDR=$ADDR; s_client -alpn http/1.1 | grep -q 'ALPN protocol: http/1.1'"
check "TLS 1.3 by default" sh -c "$(declare -f s_client); ADDR=$ADDR; s_client | grep -qE 'Protocol *: TLSv1.3|TLSv1.3, Cipher'"
check "TLS 1.2 accepted" sh -c "$(declare -f s_client); ADDR=$ADDR; s_client -tls1_2 | grep -qE 'Protocol *: TLSv1.2|TLSv1.2, Cipher'"
check "TLS 1.1 refused" sh -c "$(declare -f s_client); ADDR=$ADDR; s_client -tls1_1 -cipher 'DEFAULT:@SECLEVEL=0' | grep -q 'Cipher is (NONE)'"
# The examples build with the `http2` feature, so h2 is offered first.
check "ALPN h2 negotiated" sh -c "$(declare -f s_client); ADDR=$ADDR; s_client -alpn h2,http/1.1 | grep -q 'ALPN protocol: h2'"
check "an unknown protocol alone refused" sh -c "$(declare -f s_client); ADDR=$ADDR; s_client -alpn h3 | grep -qiE 'no application protocol|alert'"
# RFC 5746's extension is the safe state; a client-initiated renegotiation is never performed
# (rustls ignores it), which testssl's renegotiation check below confirms.
check "TLS 1.2: secure renegotiation (RFC 5746) only" sh -c "$(declare -f s_client); ADDR=$ADDR; s_client -tls1_2 | grep -q 'Secure Renegotiation IS supported'"

echo "== testssl"
TESTSSL=$(command -v testssl || command -v testssl.sh || true)
if [ -z "$TESTSSL" ]; then
    echo "SKIP  testssl is not installed (apt-get install testssl.sh)"
else
    "$TESTSSL" --quiet --color 0 --warnings batch --ip one -p -U -R \
        --jsonfile "$WORK/testssl.json" "$ADDR" > "$WORK/testssl.txt" 2>&1
    python3 - "$WORK/testssl.json" << 'PY'
import json, sys
findings = json.load(open(sys.argv[1]))
bad = [f for f in findings if f.get("severity") in ("MEDIUM", "HIGH", "CRITICAL")]
offered = [f["id"] for f in findings if f["id"] in ("SSLv2", "SSLv3", "TLS1", "TLS1_1")
           and "not offered" not in f.get("finding", "")]
protocols = [f"{f['id']}: {f['finding']}" for f in findings
             if f["id"] in ("SSLv2", "SSLv3", "TLS1", "TLS1_1", "TLS1_2", "TLS1_3")]
print("      protocols: " + "; ".join(protocols))
for f in bad:
    print(f"      {f['severity']}: {f['id']}: {f['finding']}")
print(f"      {len(findings)} findings, {len(bad)} of severity MEDIUM or above; "
      f"old protocols offered: {offered or 'none'}")
sys.exit(1 if bad or offered else 0)
PY
    if [ $? -eq 0 ]; then pass "testssl: no vulnerable protocol, cipher or renegotiation"; else fail "testssl"; fi
fi

echo
if [ "$failures" -eq 0 ]; then echo "all TLS checks passed"; else echo "$failures TLS check(s) failed"; fi
exit $(( failures > 0 ))
