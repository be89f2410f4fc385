"""``simulate -n NAMESPACE -l SELECTOR``: the tables show the matching pods only;
the document (``-o json``) stays whole."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from kubesched.cli.main import main

REAL = Path(__file__).resolve().parents[2] / "examples" / "real" / "cluster.yaml"


def names(*args: str) -> list[str]:
    r = CliRunner().invoke(main, ["simulate", "-f", str(REAL), *args])
    assert r.exit_code == 0, r.output
    blocks = r.stdout.split("\n\n")
    table = (blocks[0] if "--watch" in args else blocks[-1]).splitlines()
    col = 2 if table[0].startswith("TIME") else 1
    return [row.split()[col] for row in table[1:]]


def test_namespace_and_selector_filter_the_tables() -> None:
    everything = names()
    shop = names("-n", "shop")
    assert shop and set(shop) < set(everything)
    db = names("-n", "shop", "-l", "app.kubernetes.io/name=db")
    assert db == ["db-0", "db-1"]
    not_db = names("-n", "shop", "-l", "app.kubernetes.io/name!=db")
    assert sorted(db + not_db) == sorted(shop)
    assert names("-l", "k8s-app=kube-proxy", "-n", "shop") == []
    watched = names("--watch", "-n", "shop", "-l", "app.kubernetes.io/name in (db)")
    assert watched == ["db-0", "db-1"]  # one change each: created bound


def test_a_bad_selector_is_bad_input() -> None:
    r = CliRunner().invoke(main, ["simulate", "-f", str(REAL), "-l", "app in web"])
    assert r.exit_code == 2
    assert r.stderr.strip() == "error: --selector: unable to parse requirement: found 'app in web'"
