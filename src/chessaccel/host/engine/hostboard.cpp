// The host's positions in compiled code: the moves, children, keys and draw tests of the host's
// plies (host/engine/hostboard.py loads this through ctypes and says why it exists).
//
// A search keeps a stack of positions, one per ply; push writes ply i + 1 from ply i, so that
// popping is only the host forgetting an index. Squares hold the model's 4-bit codes
// (chessaccel/geometry.py: colour << 3 | piece type, 0 empty), castling the model's rights
// (white kingside 1, queenside 2, black 4, 8), ep the square a double push passed over (64 none),
// exactly as the model Board that a job carries. Moves are from | to << 6 | promotion << 12 with
// the promotion as a piece type (knight 2 .. queen 5); 0 stands for "no move".
//
// Everything here has a python-chess counterpart that the tests hold it to: legal moves in the
// accelerator's generation order (order.ordered_moves), children (the model Board's make), the
// transposition key's equality (python-chess's _transposition_key), check, checkmate, the
// fifty-move rule and dead material (python-chess's is_insufficient_material).

// Built by the install (setup.py) as an extension module, so that whatever imports every module
// of the package finds one; the host calls it through ctypes, never through Python's C API.
#ifdef HOSTBOARD_PYTHON_MODULE
#include <Python.h>
#endif
#include "hostboard.hpp"

using namespace hostboard;


extern "C" {

int hb_pos_size() { return (int)sizeof(Pos); }

// The SHA-256 of this file when it was built, set by the build (setup.py or hostboard.py), so the
// host can tell an installed library from a stale one.
#ifndef HOSTBOARD_DIGEST
#define HOSTBOARD_DIGEST ""
#endif
const char *hb_source_digest() { return HOSTBOARD_DIGEST; }

#ifdef HOSTBOARD_PYTHON_MODULE
static struct PyModuleDef hostboard_module = {
    PyModuleDef_HEAD_INIT, "_hostboard",
    "The host's compiled board (hostboard.cpp); chessaccel.host.engine.hostboard loads it with ctypes.",
    -1, nullptr, nullptr, nullptr, nullptr, nullptr};
PyMODINIT_FUNC PyInit__hostboard(void) { return PyModule_Create(&hostboard_module); }
#endif

// Complete a position whose squares, side, castling, ep and halfmove clock were written: kings
// and key.
void hb_init(Pos* stack, int i) {
    Pos& p = stack[i];
    p.king[0] = p.king[1] = 64;
    for (int s = 0; s < 64; s++)
        if (type_of(p.sq[s]) == KING) p.king[color_of(p.sq[s])] = s;
    p.key = compute_key(p);
}

// Ply i := a python-chess board's position from its bitboards (white, black, then pawns,
// knights, bishops, rooks, queens, kings), the side, the model's castling rights, the ep square
// (64: none) and the halfmove clock; kings and key included (hb_init).
void hb_set_chess(Pos* stack, int i, const uint64_t* masks, int side, int castling, int ep,
                  uint32_t halfmove) {
    Pos& p = stack[i];
    std::memset(p.sq, EMPTY, sizeof p.sq);
    for (int color = 0; color < 2; color++)
        for (int type = PAWN; type <= KING; type++)
            for (uint64_t bits = masks[color] & masks[1 + type]; bits; bits &= bits - 1)
                p.sq[__builtin_ctzll(bits)] = (uint8_t)make_code(color, type);
    p.side = (uint8_t)side;
    p.castling = (uint8_t)castling;
    p.ep = (uint8_t)ep;
    p.halfmove = halfmove;
    hb_init(stack, i);
}

// `move` is one of ply i's legal moves.
int hb_is_legal(const Pos* stack, int i, uint32_t move) {
    uint32_t moves[MAX_MOVES];
    return index_of(moves, legal_moves(stack[i], moves), move) >= 0;
}

// Ply i + 1 := ply i after `move`; returns its key.
uint64_t hb_push(Pos* stack, int i, uint32_t move) {
    Pos& c = stack[i + 1];
    make(stack[i], move, c);
    return c.key;
}

// Legal moves of ply i in the host's order (ordered_moves, hostboard.hpp).
int hb_ordered(const Pos* stack, int i, uint32_t tt, int tt_front, uint32_t k1, uint32_t k2,
               uint32_t* out, int bad_last) {
    return ordered_moves(stack[i], tt, tt_front, k1, k2, out, bad_last);
}

int hb_losing_capture(const Pos* stack, int i, uint32_t move) {
    return losing_capture(stack[i], move);
}

// The children of ply i after each of `moves` (what their jobs carry), into out[0 .. n).
void hb_children(const Pos* stack, int i, const uint32_t* moves, int n, Pos* out) {
    for (int k = 0; k < n; k++) make_board(stack[i], moves[k], out[k]);
}

int hb_in_check(const Pos* stack, int i) { return in_check(stack[i]); }

int hb_is_checkmate(const Pos* stack, int i) {
    return is_checkmate(stack[i]);
}

// The fifty-move rule ends the game here (python-chess: the clock at 100 and not checkmate).
int hb_fifty_moves(const Pos* stack, int i) {
    return fifty_moves(stack[i]);
}

int hb_insufficient_material(const Pos* stack, int i) {
    return insufficient_material(stack[i]);
}

// The draws the host sees at a node besides repetition: fifty moves, dead material.
int hb_drawn(const Pos* stack, int i) {
    return fifty_moves(stack[i]) || insufficient_material(stack[i]);
}

// A capture (en passant included) of ply i: python-chess's is_capture.
int hb_is_capture(const Pos* stack, int i, uint32_t move) {
    return is_capture(stack[i], move);
}

// A capture or a pawn move: python-chess's is_zeroing.
int hb_is_zeroing(const Pos* stack, int i, uint32_t move) {
    return is_zeroing(stack[i], move);
}

// Ply i + 1 := ply i with the side to move passing (null-move pruning: never in check); its key.
uint64_t hb_push_null(Pos* stack, int i) {
    make_null(stack[i], stack[i + 1]);
    return stack[i + 1].key;
}

// `move` of ply i leaves the opponent in check.
int hb_gives_check(const Pos* stack, int i, uint32_t move) {
    return gives_check(stack[i], move);
}

// The side to move of ply i has a piece besides pawns and king (null move is unsafe without:
// zugzwang).
int hb_has_pieces(const Pos* stack, int i) {
    return has_pieces(stack[i]);
}

}  // extern "C"
