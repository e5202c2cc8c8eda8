"""The weights of the "terms" evaluation, defined once in evalweights.json (docs/semantics.md,
section 6, "The terms evaluation").

The JSON file beside this module is the one table of weights: the model (model/evalterms.py)
and the OpenCL kernels' generated prelude (host/opencl/layout.py) read it through the names
below, and a tuner writes a new file with a higher ``version``. Every weight is an (mg, eg) pair
in centipawns for one occurrence of a feature, from the side that has it; per-rank tables are
indexed by the relative rank (rank 1 = 0, the side's own frame). The Amaranth shapes say how
wide a weight and the sums are, and loading refuses a file whose weights do not fit them.

Two evaluations exist (``EVALUATIONS``): "pst", material and piece-square tables only (the
default, what every implementation runs), and "terms", the same plus the terms of section 6.
"""

import json
from importlib import resources

from amaranth.hdl import signed, unsigned
from amaranth.lib import data

from .defs import PieceType
from .evaltables import EvalSums, SQUARE_EG, SQUARE_MG, SquareValue

__all__ = ["EVALUATIONS", "DEFAULT_EVALUATION", "EvaluationError", "check_evaluation",
           "WeightsError", "load_weights", "WEIGHTS", "WEIGHTS_VERSION", "TERMS",
           "PASSED_PAWN_MG", "PASSED_PAWN_EG", "PASSED_PAWN_FREE_PATH", "PASSED_PAWN_BLOCKED",
           "ISOLATED_PAWN", "DOUBLED_PAWN", "BACKWARD_PAWN", "CONNECTED_PAWN",
           "KING_SHIELD_NEAR", "KING_SHIELD_FAR", "KING_OPEN_FILE", "KING_HALF_OPEN_FILE",
           "KING_ZONE_ATTACK", "MOBILITY_PER_SQUARE", "MOBILITY_CENTRE", "BISHOP_PAIR",
           "ROOK_OPEN_FILE", "ROOK_HALF_OPEN_FILE", "ROOK_SEVENTH", "TEMPO", "THREAT_WEIGHTS",
           "THREAT_BY_PAWN", "THREAT_BY_MINOR", "THREAT_BY_ROOK", "HANGING_PIECE",
           "WEIGHT_BITS", "Weight", "WeightPair", "MobilityCentre", "SUM_BOUND", "SUM_BITS", "pair_weights", "scalar_weights", "markdown_weights",
           "rank_tables", "WEIGHT_NAMES", "weight_vectors", "raw_weights", "weights_json",
           "SQUARE_PIECES", "SQUARE_BITS", "TERMS_SQUARE_MG", "TERMS_SQUARE_EG", "square_tables",
           "markdown_squares"]

#: The evaluations an implementation may offer, by name; the first is the default.
EVALUATIONS = ("pst", "terms")
DEFAULT_EVALUATION = EVALUATIONS[0]


class EvaluationError(ValueError):
    """An evaluation name that is not one of EVALUATIONS."""


def check_evaluation(name):
    """``name`` when it is one of EVALUATIONS; EvaluationError with one line otherwise."""
    if name not in EVALUATIONS:
        raise EvaluationError(f"unknown evaluation {name!r} (choose from: {', '.join(EVALUATIONS)})")
    return name


#: The terms of the "terms" evaluation in the order `chessaccel eval` lists them; each is an
#: (mg, eg) pair from white's view (section 6 defines each).
TERMS = ("material_pst", "passed_pawns", "isolated_pawns", "doubled_pawns", "backward_pawns",
         "connected_pawns", "king_shield", "king_files", "king_attacks", "mobility",
         "bishop_pair", "rook_files", "rook_seventh", "threats", "tempo")

# --- shapes: how wide a weight is ------------------------------------------------------------

#: Bits of one signed weight: -256..255 centipawns per occurrence.
WEIGHT_BITS = 9
Weight = signed(WEIGHT_BITS)
#: A mobility term's centre (the square count worth 0): at most 27, a queen's most.
MobilityCentre = unsigned(5)


class WeightPair(data.Struct):
    """One weight: middlegame and endgame centipawns."""
    mg: Weight
    eg: Weight


_P, _N, _B, _R, _Q, _K = (PieceType[n].value
                          for n in ("PAWN", "KNIGHT", "BISHOP", "ROOK", "QUEEN", "KING"))
_ZONE_ATTACKERS = {"pawn": _P, "knight": _N, "bishop": _B, "rook": _R, "queen": _Q}
_MOBILE = {"knight": _N, "bishop": _B, "rook": _R, "queen": _Q}
#: The most target squares each mobile piece can have (a rook 14, a queen 27).
_MOST_TARGETS = {_N: 8, _B: 13, _R: 14, _Q: 27}
_PAIRS = ("passed_pawn_free_path", "passed_pawn_blocked", "isolated_pawn", "doubled_pawn",
          "backward_pawn", "connected_pawn", "king_shield_near", "king_shield_far",
          "king_open_file", "king_half_open_file", "bishop_pair", "rook_open_file",
          "rook_half_open_file", "rook_seventh", "tempo")
#: The threat weights (section 6.1, `threats`), optional in a file: one without them (versions
#: 1 to 4) reads them as 0, the evaluation it was made for.
THREAT_WEIGHTS = ("threat_by_pawn", "threat_by_minor", "threat_by_rook", "hanging_piece")


#: The pieces of the terms evaluation's own table of material + piece-square values (the file's
#: optional "squares"), by name and PieceType value.
SQUARE_PIECES = {"pawn": _P, "knight": _N, "bishop": _B, "rook": _R, "queen": _Q, "king": _K}
#: The width of one entry of that table: the hardware's SquareValue.
SQUARE_BITS = data.Layout.cast(SquareValue)["mg"].shape.width


class WeightsError(ValueError):
    """A weights file that is not the documented table: the message is one line."""


def _pair(value, where):
    if (not isinstance(value, list) or len(value) != 2
            or not all(type(v) is int for v in value)):
        raise WeightsError(f"{where} must be [mg, eg], two integers, got {value!r}")
    low, high = -(1 << (WEIGHT_BITS - 1)), (1 << (WEIGHT_BITS - 1)) - 1
    for v in value:
        if not low <= v <= high:
            raise WeightsError(f"{where}: {v} does not fit a weight ({low}..{high})")
    return tuple(value)


def _read(table, key, where):
    if not isinstance(table, dict) or key not in table:
        raise WeightsError(f"{where} has no {key!r}")
    return table[key]


def load_weights(text=None):
    """The weights of a JSON text (default: the package's evalweights.json) as a dict of
    checked values: pairs as (mg, eg) tuples, the passed-pawn tables as 8-tuples, the king-zone
    and mobility weights keyed by PieceType value. Raises WeightsError with one line."""
    if text is None:
        text = resources.files(__package__).joinpath("evalweights.json").read_text()
    try:
        raw = json.loads(text)
    except json.JSONDecodeError as e:
        raise WeightsError(f"evaluation weights are not JSON: {e}") from None
    version = _read(raw, "version", "the weights")
    if type(version) is not int or version < 1:
        raise WeightsError(f"the weights' version must be a positive integer, got {version!r}")
    out = {"version": version}
    passed = _read(raw, "passed_pawn", "the weights")
    for phase in ("mg", "eg"):
        table = _read(passed, phase, "passed_pawn")
        if not isinstance(table, list) or len(table) != 8:
            raise WeightsError(f"passed_pawn.{phase} must list 8 ranks, got {table!r}")
        for rank, v in enumerate(table):
            _pair([v, 0], f"passed_pawn.{phase}[{rank}]")
        if table[0] or table[7]:
            raise WeightsError(f"passed_pawn.{phase}: ranks 1 and 8 hold no pawn and must be 0")
        out[f"passed_pawn_{phase}"] = tuple(table)
    for key in _PAIRS:
        out[key] = _pair(_read(raw, key, "the weights"), key)
    for key in THREAT_WEIGHTS:
        out[key] = _pair(raw[key], key) if key in raw else (0, 0)
    zone = _read(raw, "king_zone_attack", "the weights")
    out["king_zone_attack"] = {t: _pair(_read(zone, name, "king_zone_attack"),
                                        f"king_zone_attack.{name}")
                               for name, t in _ZONE_ATTACKERS.items()}
    mobility = _read(raw, "mobility", "the weights")
    out["mobility_per_square"], out["mobility_centre"] = {}, {}
    for name, t in _MOBILE.items():
        entry = _read(mobility, name, "mobility")
        out["mobility_per_square"][t] = _pair(_read(entry, "per_square", f"mobility.{name}"),
                                              f"mobility.{name}.per_square")
        centre = _read(entry, "centre", f"mobility.{name}")
        if type(centre) is not int or not 0 <= centre <= _MOST_TARGETS[t]:
            raise WeightsError(f"mobility.{name}.centre must be 0..{_MOST_TARGETS[t]}, "
                               f"got {centre!r}")
        out["mobility_centre"][t] = centre
    out["square_mg"], out["square_eg"] = _squares(raw)
    bound = _sum_bound(out)
    if bound >= 1 << (SUM_BITS - 1):
        raise WeightsError(f"with these weights the sums can reach {bound}, more than "
                           f"{SUM_BITS}-bit sums hold")
    out["sum_bound"] = bound
    return out


def _squares(raw):
    """(mg, eg): {PieceType value: 64 values} of the file's "squares", the material +
    piece-square value of a white piece on each square (index = square, a1 = 0) that the terms
    evaluation uses instead of the pst evaluation's (contract/evaltables.py); those tables when
    the file has none."""
    if "squares" not in raw:
        return dict(SQUARE_MG), dict(SQUARE_EG)
    squares = raw["squares"]
    if not isinstance(squares, dict) or set(squares) != set(SQUARE_PIECES):
        raise WeightsError(f"squares must hold a table for each of "
                           f"{', '.join(SQUARE_PIECES)}, got {sorted(squares) if isinstance(squares, dict) else squares!r}")
    low, high = -(1 << (SQUARE_BITS - 1)), (1 << (SQUARE_BITS - 1)) - 1
    out = ({}, {})
    for name, t in SQUARE_PIECES.items():
        for i, phase in enumerate(("mg", "eg")):
            table = _read(squares[name], phase, f"squares.{name}")
            if (not isinstance(table, list) or len(table) != 64
                    or not all(type(v) is int for v in table)):
                raise WeightsError(f"squares.{name}.{phase} must list 64 integers (a1 .. h8)")
            bad = [v for v in table if not low <= v <= high]
            if bad:
                raise WeightsError(f"squares.{name}.{phase}: {bad[0]} does not fit a table "
                                   f"entry ({low}..{high})")
            out[i][t] = tuple(table)
    return out


#: Bits of the evaluation's (mg, eg) sums, the hardware's EvalSums: the terms must keep the
#: sums inside them.
SUM_BITS = data.Layout.cast(EvalSums)["mg"].shape.width


def _sum_bound(w):
    """A bound on |mg| and |eg| of the terms evaluation over any board of 64 pieces: each piece's
    largest material + piece-square value plus the largest term weights it can draw (as a pawn:
    passed with path, isolated, doubled, backward, connected, in a shield, attacking two
    king-zone squares; as a piece: its mobility at either extreme, attacking nine king-zone
    squares, a rook's file and seventh-rank bonus, every threat weight), plus per side the bishop pair and the three
    king files, plus the tempo."""
    bound = 0
    for phase, i in (("mg", 0), ("eg", 1)):
        square = w[f"square_{phase}"]
        pawn = (max(abs(v) for v in w[f"passed_pawn_{phase}"])
                + max(abs(w["passed_pawn_free_path"][i]), abs(w["passed_pawn_blocked"][i]))
                + sum(abs(w[k][i]) for k in ("isolated_pawn", "doubled_pawn", "backward_pawn",
                                             "connected_pawn"))
                + max(abs(w["king_shield_near"][i]), abs(w["king_shield_far"][i]))
                + 2 * abs(w["king_zone_attack"][_P][i]))
        most = max(abs(v) for v in square[_P]) + pawn
        for t in (_N, _B, _R, _Q):
            c = w["mobility_centre"][t]
            piece = (max(abs(v) for v in square[t])
                     + abs(w["mobility_per_square"][t][i]) * max(c, _MOST_TARGETS[t] - c)
                     + 9 * abs(w["king_zone_attack"][t][i]))
            if t == _R:
                piece += (max(abs(w["rook_open_file"][i]), abs(w["rook_half_open_file"][i]))
                          + abs(w["rook_seventh"][i]))
            piece += sum(abs(w[k][i]) for k in THREAT_WEIGHTS)
            most = max(most, piece)
        most = max(most, max(abs(v) for v in square[_K]))
        per_side = abs(w["bishop_pair"][i]) + 3 * max(abs(w["king_open_file"][i]),
                                                      abs(w["king_half_open_file"][i]))
        bound = max(bound, 64 * most + 2 * per_side + abs(w["tempo"][i]))
    return bound


WEIGHTS = load_weights()
WEIGHTS_VERSION = WEIGHTS["version"]
#: The largest |mg| or |eg| the terms evaluation's sums can reach (section 6, "Widths").
SUM_BOUND = WEIGHTS["sum_bound"]

PASSED_PAWN_MG = WEIGHTS["passed_pawn_mg"]
PASSED_PAWN_EG = WEIGHTS["passed_pawn_eg"]
PASSED_PAWN_FREE_PATH = WEIGHTS["passed_pawn_free_path"]
PASSED_PAWN_BLOCKED = WEIGHTS["passed_pawn_blocked"]
ISOLATED_PAWN = WEIGHTS["isolated_pawn"]
DOUBLED_PAWN = WEIGHTS["doubled_pawn"]
BACKWARD_PAWN = WEIGHTS["backward_pawn"]
CONNECTED_PAWN = WEIGHTS["connected_pawn"]
KING_SHIELD_NEAR = WEIGHTS["king_shield_near"]
KING_SHIELD_FAR = WEIGHTS["king_shield_far"]
KING_OPEN_FILE = WEIGHTS["king_open_file"]
KING_HALF_OPEN_FILE = WEIGHTS["king_half_open_file"]
#: PieceType value -> (mg, eg) per king-zone square attacked by an enemy piece of that type
KING_ZONE_ATTACK = WEIGHTS["king_zone_attack"]
#: PieceType value -> (mg, eg) per target square; MOBILITY_CENTRE: the count worth 0
MOBILITY_PER_SQUARE = WEIGHTS["mobility_per_square"]
MOBILITY_CENTRE = WEIGHTS["mobility_centre"]
BISHOP_PAIR = WEIGHTS["bishop_pair"]
ROOK_OPEN_FILE = WEIGHTS["rook_open_file"]
ROOK_HALF_OPEN_FILE = WEIGHTS["rook_half_open_file"]
ROOK_SEVENTH = WEIGHTS["rook_seventh"]
TEMPO = WEIGHTS["tempo"]
#: (mg, eg) per own knight, bishop, rook or queen threatened (section 6.1, `threats`)
THREAT_BY_PAWN = WEIGHTS["threat_by_pawn"]
THREAT_BY_MINOR = WEIGHTS["threat_by_minor"]
THREAT_BY_ROOK = WEIGHTS["threat_by_rook"]
HANGING_PIECE = WEIGHTS["hanging_piece"]
#: PieceType value -> the 64 material + piece-square values (mg, eg) of a white piece in the
#: terms evaluation: the file's "squares", or the pst evaluation's tables when it has none.
TERMS_SQUARE_MG = WEIGHTS["square_mg"]
TERMS_SQUARE_EG = WEIGHTS["square_eg"]


def square_tables(evaluation):
    """(SQUARE_MG, SQUARE_EG) of ``evaluation``: {PieceType value: 64 values}, material + the
    piece-square value of a white piece on each square. EvaluationError for an unknown name."""
    if check_evaluation(evaluation) == "terms":
        return TERMS_SQUARE_MG, TERMS_SQUARE_EG
    return SQUARE_MG, SQUARE_EG


def pair_weights():
    """Every (mg, eg) weight by an upper-case name (the kernels' prelude defines NAME_MG and
    NAME_EG from it): the pairs of the file, KING_ZONE_ATTACK_<TYPE> and MOBILITY_<TYPE>."""
    out = {key.upper(): WEIGHTS[key] for key in _PAIRS + THREAT_WEIGHTS}
    for name, t in _ZONE_ATTACKERS.items():
        out[f"KING_ZONE_ATTACK_{name.upper()}"] = KING_ZONE_ATTACK[t]
    for name, t in _MOBILE.items():
        out[f"MOBILITY_{name.upper()}"] = MOBILITY_PER_SQUARE[t]
    return out


def scalar_weights():
    """The weights that are single numbers, by an upper-case name: MOBILITY_CENTRE_<TYPE>."""
    return {f"MOBILITY_CENTRE_{name.upper()}": MOBILITY_CENTRE[t] for name, t in _MOBILE.items()}


def rank_tables():
    """The per-rank tables by name (the kernels' prelude writes them as arrays)."""
    return {"PASSED_PAWN_MG": PASSED_PAWN_MG, "PASSED_PAWN_EG": PASSED_PAWN_EG}


def markdown_weights():
    """The rows of docs/semantics.md's weights table (section 6.1), from the loaded file."""
    w = WEIGHTS
    rows = [f"| `passed_pawn[r]`, r = 0..7 | {', '.join(map(str, w['passed_pawn_mg']))} | "
            f"{', '.join(map(str, w['passed_pawn_eg']))} |"]
    rows += [f"| `{key}` | {w[key][0]} | {w[key][1]} |" for key in _PAIRS]
    rows += [f"| `king_zone_attack.{name}` | {KING_ZONE_ATTACK[t][0]} | {KING_ZONE_ATTACK[t][1]} |"
             for name, t in _ZONE_ATTACKERS.items()]
    rows += [f"| `mobility.{name}.per_square` (centre {MOBILITY_CENTRE[t]}) | "
             f"{MOBILITY_PER_SQUARE[t][0]} | {MOBILITY_PER_SQUARE[t][1]} |"
             for name, t in _MOBILE.items()]
    rows += [f"| `{key}` | {w[key][0]} | {w[key][1]} |" for key in THREAT_WEIGHTS]
    return "\n".join(rows)


# --- the weights as vectors, for a tuner (host/tunecli.py) ------------------------------------

#: Every tunable weight by name, in the order of a tuner's vectors (and of the model's
#: feature_counts, model/evalterms.py): the passed-pawn table's ranks 1..6 (ranks 0 and 7 hold
#: no pawn and stay 0), the pairs, the king-zone weights per attacker and the mobility weights per
#: piece (their centres are not weights: they stay as the file sets them), then the threats.
WEIGHT_NAMES = (tuple(f"passed_pawn[{r}]" for r in range(1, 7)) + _PAIRS
                + tuple(f"king_zone_attack.{name}" for name in _ZONE_ATTACKERS)
                + tuple(f"mobility.{name}" for name in _MOBILE) + THREAT_WEIGHTS)


def weight_vectors(weights=None):
    """(mg, eg): two tuples of the weights of ``weights`` (a load_weights dict; default the
    package's) in WEIGHT_NAMES order."""
    w = WEIGHTS if weights is None else weights
    pairs = ([(w["passed_pawn_mg"][r], w["passed_pawn_eg"][r]) for r in range(1, 7)]
             + [w[key] for key in _PAIRS]
             + [w["king_zone_attack"][t] for t in _ZONE_ATTACKERS.values()]
             + [w["mobility_per_square"][t] for t in _MOBILE.values()]
             + [w[key] for key in THREAT_WEIGHTS])
    return tuple(p[0] for p in pairs), tuple(p[1] for p in pairs)


def raw_weights(mg, eg, version, about, centres=None, squares=None):
    """The JSON object of a weights file (evalweights.json's keys, in its order) from the vectors
    ``mg`` and ``eg`` (WEIGHT_NAMES order, integers), a version, an ``about`` text, the
    mobility centres ({PieceType value: centre}; default the package's) and the terms
    evaluation's own material + piece-square tables (``squares``: (mg, eg), each {PieceType
    value: 64 integers}; None for a file without them, whose terms use the pst tables)."""
    centres = MOBILITY_CENTRE if centres is None else centres
    by_name = {name: [int(m), int(e)] for name, m, e in zip(WEIGHT_NAMES, mg, eg, strict=True)}
    out = {"version": version, "about": about,
           "passed_pawn": {"mg": [0] + [by_name[f"passed_pawn[{r}]"][0] for r in range(1, 7)] + [0],
                           "eg": [0] + [by_name[f"passed_pawn[{r}]"][1] for r in range(1, 7)] + [0]}}
    for key in _PAIRS[:10]:
        out[key] = by_name[key]
    out["king_zone_attack"] = {name: by_name[f"king_zone_attack.{name}"] for name in _ZONE_ATTACKERS}
    out["mobility"] = {name: {"per_square": by_name[f"mobility.{name}"], "centre": centres[t]}
                       for name, t in _MOBILE.items()}
    for key in _PAIRS[10:] + THREAT_WEIGHTS:
        out[key] = by_name[key]
    if squares is not None:
        out["squares"] = {name: {"mg": [int(v) for v in squares[0][t]],
                                 "eg": [int(v) for v in squares[1][t]]}
                          for name, t in SQUARE_PIECES.items()}
    return out


def weights_json(raw):
    """The text of a weights file for the object ``raw`` (raw_weights), laid out as
    evalweights.json is: one weight a line, short lists and objects inline."""
    def inline(value):
        if isinstance(value, dict):
            return "{" + ", ".join(f"{json.dumps(k)}: {inline(v)}" for k, v in value.items()) + "}"
        return json.dumps(value)

    def block(value, indent, parent=None):
        pad = "  " * (indent + 1)
        # the top level's objects, and the squares' tables (one piece's 64 values a line)
        rows = [f"{pad}{json.dumps(k)}: "
                + (block(v, indent + 1, k) if (indent == 0 or parent == "squares")
                   and isinstance(v, dict) else inline(v))
                for k, v in value.items()]
        return "{\n" + ",\n".join(rows) + "\n" + "  " * indent + "}"
    return block(raw, 0) + "\n"


def markdown_squares():
    """docs/semantics.md's appendix of the terms evaluation's material + piece-square tables
    (rank 8 at the top), or a line saying it uses the pst tables."""
    if TERMS_SQUARE_MG == dict(SQUARE_MG) and TERMS_SQUARE_EG == dict(SQUARE_EG):
        return "The terms evaluation uses the pst evaluation's tables (the file has no `squares`)."
    out = []
    for name, t in SQUARE_PIECES.items():
        for phase, table in (("mg", TERMS_SQUARE_MG), ("eg", TERMS_SQUARE_EG)):
            out += [f"squares.{name}.{phase} (material included), white's view (a1 bottom left):",
                    "", "```"]
            out += [" ".join(f"{table[t][rank * 8 + f]:5d}" for f in range(8))
                    for rank in range(7, -1, -1)]
            out += ["```", ""]
    return "\n".join(out)


if __name__ == "__main__":
    print(markdown_weights())
    print()
    print(markdown_squares())
