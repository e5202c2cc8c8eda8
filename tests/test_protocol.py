"""The host frame codec (chessaccel/protocol.py): CRC, payload layouts, encoder and decoder."""

import random

from hypothesis import example, given, settings, strategies as st

from chessaccel.contract.defs import Mode, Move, PieceType, Position, SearchJob, SearchResult, Status
from chessaccel.contract.protocol import (CRC_BYTES, CRC_CHECK, HEADER_BYTES, MAX_PAYLOAD, REPLY_LAYOUT,
                                 REQUEST_LAYOUT, START_MARKER, Command, ErrorCode, Frame,
                                 FrameDecoder, FrameError, JobRequest, ResultReply, byte_size,
                                 crc16, decode_payload, encode_frame, encode_payload)
from chessaccel.model.position import parse_position

frames = st.builds(lambda seq, command, payload: (seq, command, payload),
                   st.integers(0, 255), st.integers(0, 255), st.binary(max_size=MAX_PAYLOAD))


def test_crc_check_value():
    """CRC-16/CCITT-FALSE's published check value."""
    assert crc16(b"123456789") == CRC_CHECK == 0x29B1


def test_every_payload_fits_the_buffer():
    sizes = [byte_size(layout) for layout in (*REQUEST_LAYOUT.values(), *REPLY_LAYOUT.values())]
    assert max(sizes) == MAX_PAYLOAD
    assert byte_size(JobRequest) == MAX_PAYLOAD     # the job is the longest frame


def test_job_and_result_round_trip_through_the_shared_layouts():
    board, _ = parse_position("r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1")
    job = SearchJob.const({"position": Position.from_bits(board.to_bits()), "depth": 3,
                           "alpha": -32767, "beta": 32767, "mode": Mode.PERFT})
    payload = encode_payload(JobRequest, {"job_id": 0xBEEF, "job": job})
    request = decode_payload(JobRequest, payload)
    assert int(request.job_id) == 0xBEEF
    assert request.job.position.as_value().value == board.to_bits()
    assert (int(request.job.depth), request.job.alpha, request.job.beta, request.job.mode) == \
        (3, -32767, 32767, Mode.PERFT)
    move = Move.const({"from_sq": 12, "to_sq": 28, "promo": PieceType.NONE})
    result = {"score": -31998, "best_move": move, "nodes": (1 << 40) - 1, "cycles": 123456789,
              "status": Status.DONE}
    reply = decode_payload(ResultReply, encode_payload(
        ResultReply, {"job_id": 7, "core": 2, "result": SearchResult.const(result)}))
    assert (reply.result.score, int(reply.result.nodes), int(reply.result.cycles),
            reply.result.status, reply.result.best_move.to_sq.as_value().value) == \
        (-31998, (1 << 40) - 1, 123456789, Status.DONE, 28)


def test_decoder_reports_each_fault_and_resynchronises():
    good = encode_frame(9, Command.STATUS)
    bad_crc = bytearray(encode_frame(3, Command.INFO))
    bad_crc[-1] ^= 1
    too_long = bytes([START_MARKER, MAX_PAYLOAD + 1, 4, Command.INFO.value])
    items = FrameDecoder().feed(b"\x00\x11" + bytes(bad_crc) + too_long + good)
    assert [type(i) for i in items] == [FrameError, FrameError, Frame]
    assert [items[0].code, items[0].seq, items[1].code, items[1].seq] == \
        [ErrorCode.BAD_CRC, 3, ErrorCode.BAD_LENGTH, 4]
    assert items[2] == Frame(9, Command.STATUS.value, b"")
    decoder = FrameDecoder()
    assert decoder.feed(good[:-1]) == [] and decoder.in_frame
    [truncated] = decoder.flush()
    assert truncated.code == ErrorCode.TRUNCATED and truncated.seq == 9
    assert decoder.feed(good) == [Frame(9, Command.STATUS.value, b"")]


def _fed_in_chunks(decoder, stream, seed, largest):
    """What ``decoder`` makes of ``stream`` fed in random chunks of 1 to ``largest`` bytes."""
    rng = random.Random(seed)
    items, i = [], 0
    while i < len(stream):
        step = rng.randrange(1, largest + 1)
        items += decoder.feed(stream[i:i + step])
        i += step
    return items


def test_the_hosts_decoder_finds_a_reply_a_broken_frame_swallowed():
    """A reply ending in a start marker byte, every copy after one stray marker: the hardware's
    rules (never rewind) read each copy's own marker as the length of a false frame opened by
    the copy before, and lose them all; the host's decoder looks again at the bytes after a bad
    frame's marker and finds every copy."""
    seq, first = next((seq, first) for seq in range(256) for first in range(256)
                      if encode_frame(seq, Command.INFO, bytes([first, 1, 2, 3]))[-1] == START_MARKER)
    reply = encode_frame(seq, Command.INFO, bytes([first, 1, 2, 3]))
    stream = bytes([START_MARKER]) + reply * 4
    swallowed = FrameDecoder().feed(stream)
    assert [i.code for i in swallowed] == [ErrorCode.BAD_LENGTH] * 4
    found = FrameDecoder(rescan=True).feed(stream)
    assert found[0].code == ErrorCode.BAD_LENGTH
    assert found[1:] == [Frame(seq, Command.INFO.value, bytes([first, 1, 2, 3]))] * 4


@given(st.binary(max_size=60), st.lists(frames, min_size=1, max_size=4), st.integers(0, 2 ** 32))
@example(b"\xa5\x03", [(0, 0, b"")], 0)
def test_the_hosts_decoder_finds_every_frame_after_any_junk(junk, frame_list, seed):
    """Whatever came before (a cut frame, noise, false markers), in any chunking: every frame
    that follows is decoded by the host's decoder once the line goes quiet (its bytes may also
    open false frames; junk may open one longer than the rest of the stream: b"\xa5\x03"
    before an empty frame did, which only the flush's second look finds)."""
    stream = junk + b"".join(encode_frame(*f) for f in frame_list)
    decoder = FrameDecoder(rescan=True)
    items = _fed_in_chunks(decoder, stream, seed, 11) + decoder.flush()
    assert not decoder.in_frame
    decoded = [item for item in items if isinstance(item, Frame)]
    assert decoded[len(decoded) - len(frame_list):] == [Frame(*f) for f in frame_list]


@given(frames)
def test_valid_frames_round_trip(frame):
    seq, command, payload = frame
    assert FrameDecoder().feed(encode_frame(seq, command, payload)) == [Frame(seq, command, payload)]


@given(st.lists(frames, max_size=6), st.integers(0, 2 ** 32))
def test_split_frames_decode_the_same_in_any_chunking(frame_list, seed):
    stream = b"".join(encode_frame(*f) for f in frame_list)
    assert _fed_in_chunks(FrameDecoder(), stream, seed, 8) == [Frame(*f) for f in frame_list]


@settings(max_examples=300)
@given(st.binary(max_size=400), st.booleans())
def test_random_bytes_never_crash_the_decoder(stream, rescan):
    decoder = FrameDecoder(rescan=rescan)
    items = decoder.feed(stream) + decoder.flush()
    assert not decoder.in_frame
    for item in items:
        assert isinstance(item, (Frame, FrameError))
        if isinstance(item, Frame):
            assert len(item.payload) <= MAX_PAYLOAD


@given(frames, st.integers(0, HEADER_BYTES + MAX_PAYLOAD + CRC_BYTES), frames)
def test_a_truncated_frame_never_hides_the_next_one_for_long(first, cut, second):
    """A cut frame is lost (or reported); after flush (the line went quiet) the next arrives."""
    decoder = FrameDecoder()
    decoder.feed(encode_frame(*first)[:1 + cut])
    decoder.flush()
    assert decoder.feed(encode_frame(*second)) == [Frame(*second)]
