"""The bundled modules listed: name, prime, kind, the algebra they are over, their cells or generators and what they
are, read from their JSON alone (building all 46 modules takes half a minute; reading them takes milliseconds)."""
from __future__ import annotations

import json
from dataclasses import dataclass

from algebra.milnor.profile import Profile
from algebra.module.spec import bundled_dir

#: What each bundled module is, in a line; the files themselves say only how (tests check every file has one).
DESCRIPTIONS = {
    "A-mod-Sq1-Sq2": "A//A(1) = H*(ko); auto resolves F2 over A(1) instead",
    "A-mod-Sq1-Sq2-Sq4": "A//A(2) = H*(tmf); auto resolves F2 over A(2) instead",
    "C2": "the mod 2 Moore spectrum S/2",
    "C2_eta": "three cells joined by Sq1 and Sq2",
    "C2_sm_Ceta": "C2 smash Ceta",
    "C2v14": "C2/v1^4: the cofiber of v1^4 on C2",
    "C3": "the mod 3 Moore spectrum S/3, as F3 over A without Q_0",
    "C3v1": "V(1) at p = 3: the cofiber of v1 on S/3",
    "C3v1b1": "V(1) at p = 3 coned off on its class b1",
    "C4": "S/4: the cofiber of h0^2 on S_2",
    "C5v1": "V(1) at p = 5",
    "C9": "S/9: the cofiber of a0^2 on S_3",
    "Calpha": "the cofiber of alpha_1 at p = 3",
    "Ceta": "the cofiber of eta",
    "Ceta2": "the cofiber of eta^2 (h1^2) on S_2",
    "Cnu": "the cofiber of nu",
    "Csigma": "the cofiber of sigma",
    "DA1": "the double of A(1), DA(1)",
    "Joker": "the Joker: five cells joined by Sq1 and Sq2",
    "RP4": "real projective 4-space RP^4",
    "RP_-4_inf": "the stunted projective spectrum RP_{-4}^inf",
    "RP_inf": "infinite real projective space RP^inf",
    "S_2": "the sphere at p = 2",
    "S_3": "the sphere at p = 3",
    "S_5": "the sphere at p = 5",
    "S_7": "the sphere at p = 7",
    "X3": "three cells joined by P1 at p = 3",
    "Z": "Bhattacharya-Egger's Z, H*(Z) = A(2)//E(Q_2); self map v_2",
    "j": "the image-of-J spectrum j",
    "j_mod_2": "j mod 2",
    "ko": "connective real K-theory ko: F2 over A(1)",
    "ko_sm_RP_inf": "ko smash RP^inf: RP^inf over A(1)",
    "ksp": "connective symplectic K-theory ksp",
    "l": "the reference's l at p = 5; self maps v_2, v_3",
    "t1": "the reference's t1 at p = 5",
    "tmf-mod-eta-nu": "tmf/(eta, nu) over A(2)",
    "tmf-mod-eta": "tmf/eta: tmf smash Ceta, over A(2)",
    "tmf-mod-nu": "tmf/nu: tmf smash Cnu, over A(2)",
    "tmf2": "topological modular forms tmf: F2 over A(2)",
    "tmf2_sm_DA1": "tmf smash DA(1), over A(2)",
    "tmf_RP": "tmf smash a stunted projective space, over A(2)",
    "tmf_sm_RP_inf": "tmf smash RP^inf: RP^inf over A(2)",
    "y1_2": "y(1) at p = 2; products v_1, v_2",
    "y1_3": "y(1) at p = 3; products v_1, v_2",
    "y2_2": "y(2) at p = 2; products v_2, v_3, v_4",
    "y2_3": "y(2) at p = 3; products v_2, v_3, v_4",
}

#: The short word for each JSON `type`.
KIND = {"finite dimensional module": "finite", "finitely presented module": "presented",
        "real projective space": "RP"}


@dataclass(frozen=True)
class Entry:
    name: str
    prime: int
    kind: str
    over: str
    cells: str
    description: str


def bundled() -> list[Entry]:
    """Every bundled module, by name (case-insensitive order)."""
    files = sorted(bundled_dir().glob("*.json"), key=lambda f: f.stem.lower())
    return [entry(f.stem, json.loads(f.read_text(encoding="utf-8"))) for f in files]


def entry(name: str, data: dict) -> Entry:
    """One module file's line: a cofiber's kind names its class x_(n, s, idx)."""
    kind = KIND.get(data.get("type"), str(data.get("type")))
    if "cofiber" in data:
        c = data["cofiber"]
        kind = f"cofiber x_({c['t'] - c['s']},{c['s']},{c['idx']})"
    profile = Profile.from_json(data.get("profile"))
    over = profile.describe() if profile.is_full or profile.is_an else "sub-Hopf"  # the profile's long form: its file
    return Entry(name, data["p"], kind, over, _cells(data), DESCRIPTIONS.get(name, ""))


def _cells(data: dict) -> str:
    """Cells of a finite module (with their degrees), generators and relations of a presented one, the range of a
    projective space."""
    if data.get("type") == "real projective space":
        top = data.get("max")
        return f"cells {data['min']}..{'inf' if top is None else top}"
    degrees = sorted(data.get("gens", {}).values())
    span = f"{degrees[0]}" if degrees[0] == degrees[-1] else f"{degrees[0]}..{degrees[-1]}"
    if data.get("type") == "finitely presented module":
        return f"{len(degrees)} gen{'s' if len(degrees) > 1 else ''}, {len(data.get('milnor_relations', []))} rel"
    return f"{len(degrees)} cell{'s' if len(degrees) > 1 else ''} {span}"


def table(entries: list[Entry]) -> list[str]:
    """The entries as aligned text lines, a header first."""
    rows = [("name", "p", "kind", "over", "cells", "what it is")]
    rows += [(e.name, str(e.prime), e.kind, e.over, e.cells, e.description) for e in entries]
    widths = [max(len(row[i]) for row in rows) for i in range(5)]
    return ["  ".join(cell.ljust(w) for cell, w in zip(row[:5], widths)) + "  " + row[5] for row in rows]
