"""Golden vectors of the link protocol (tests/data/link-golden.txt), written by hand from
docs/protocol.md with CRCs from an independent implementation (binascii.crc_hqx), against the
codec in chessaccel/protocol.py: the encoder must produce each frame byte for byte, the decoder
must read it back, payloads must unpack to the documented fields, and damaged copies (every
single-bit flip, a length above MAX_PAYLOAD, a cut) must be reported with the documented code.
"""

import binascii

import pytest

from chessaccel.contract.defs import Mode
from chessaccel.model.position import parse_position
from chessaccel.contract.protocol import (MAX_PAYLOAD, AbortRequest, AbortScope, Command, ErrorCode,
                                 ErrorReply, Frame, FrameDecoder, FrameError, InfoReply, JobAck,
                                 JobReply, JobRequest, ResultRequest, StatusReply, crc16,
                                 decode_payload, encode_frame, encode_payload)

import suites

START_FEN = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1"


def golden():
    out = {}
    for _, line in suites.suite_lines("link-golden.txt"):
        name, frame, seq, command, crc = (field.strip() for field in line.split("|"))
        out[name] = (bytes.fromhex(frame), int(seq, 16), Command[command], int(crc, 16))
    return out


GOLDEN = golden()


def test_crc_matches_published_check_values():
    for data, crc in ((b"123456789", 0x29B1), (b"A", 0xB915), (b"", 0xFFFF)):
        assert binascii.crc_hqx(data, 0xFFFF) == crc
        assert crc16(data) == crc, data


@pytest.mark.parametrize("name", list(GOLDEN))
def test_golden_frame_is_self_consistent(name):
    frame, seq, command, crc = GOLDEN[name]
    assert frame[0] == 0xA5 and frame[1] == len(frame) - 6
    assert (frame[2], frame[3]) == (seq, command.value)
    assert binascii.crc_hqx(frame[1:-2], 0xFFFF) == crc == int.from_bytes(frame[-2:], "little")


@pytest.mark.parametrize("name", list(GOLDEN))
def test_encoder_and_decoder_agree_with_the_golden_frame(name):
    frame, seq, command, crc = GOLDEN[name]
    payload = frame[4:-2]
    assert encode_frame(seq, command, payload) == frame
    assert crc16(frame[1:-2]) == crc
    assert FrameDecoder().feed(frame) == [Frame(seq, command.value, payload)]
    # noise before it and a second copy after it
    assert FrameDecoder().feed(b"\x00\x13\x37" + frame + frame) == \
        [Frame(seq, command.value, payload)] * 2


def _payload(name):
    return GOLDEN[name][0][4:-2]


def test_request_payloads_pack_as_documented():
    assert encode_payload(ResultRequest, {"job_id": 0x1234}) == _payload("result-request")
    assert encode_payload(AbortRequest, {"job_id": 0xBEEF, "scope": AbortScope.ALL}) == \
        _payload("abort-all-request")
    from chessaccel.contract.defs import Position, SearchJob
    board, _ = parse_position(START_FEN)
    job = SearchJob.const({"position": Position.from_bits(board.to_bits()), "depth": 3,
                           "alpha": -32767, "beta": 32767, "mode": Mode.SEARCH})
    assert encode_payload(JobRequest, {"job_id": 0x0102, "job": job}) == _payload("job-request")
    request = decode_payload(JobRequest, _payload("job-request"))
    assert int(request.job_id) == 0x0102 and int(request.job.depth) == 3
    assert (request.job.alpha, request.job.beta, request.job.mode) == (-32767, 32767, Mode.SEARCH)
    assert request.job.position.as_value().value == board.to_bits()


def test_reply_payloads_unpack_as_documented():
    reply = decode_payload(JobReply, _payload("job-reply"))
    assert (int(reply.job_id), int(reply.core), reply.ack) == (0x0102, 1, JobAck.ALREADY_KNOWN)
    error = decode_payload(ErrorReply, _payload("error-reply"))
    assert (error.code, int(error.command)) == (ErrorCode.BAD_CRC, Command.JOB.value)
    status = decode_payload(StatusReply, _payload("status-reply"))
    assert (int(status.busy), int(status.good_frames), int(status.bad_frames)) == (3, 0x1234, 1)
    info = decode_payload(InfoReply, _payload("info-reply"))
    assert (int(info.version), int(info.cores), int(info.clock_hz), int(info.clocks_per_bit),
            int(info.build_id)) == (1, 2, 50_000_000, 434, 0xDEADBEEF)


@pytest.mark.parametrize("name", list(GOLDEN))
def test_every_single_bit_flip_is_reported(name):
    """A flip anywhere after the length byte fails the CRC (CRC-16 detects every 1-bit error);
    a flip in the length byte makes a frame that is too long, too short or cut: never a frame."""
    frame, seq, command, _ = GOLDEN[name]
    for index in range(1, len(frame)):
        for bit in range(8):
            damaged = bytearray(frame)
            damaged[index] ^= 1 << bit
            decoder = FrameDecoder()
            items = decoder.feed(bytes(damaged)) + decoder.flush()
            assert items and all(isinstance(i, FrameError) for i in items[:1]), \
                f"{name}: flip of byte {index} bit {bit} decoded as {items}"
            if index >= 2:
                assert items[0].code == ErrorCode.BAD_CRC, f"{name}: byte {index} bit {bit}"
            if index >= 3:
                assert items[0].seq == seq, f"{name}: byte {index} bit {bit}"


def test_length_above_the_buffer_and_cut_frames():
    too_long = bytes([0xA5, MAX_PAYLOAD + 1, 0x09, Command.INFO.value])
    frame = GOLDEN["info-request"][0]
    items = FrameDecoder().feed(too_long + frame)
    assert [type(i) for i in items] == [FrameError, Frame]
    assert (items[0].code, items[0].seq) == (ErrorCode.BAD_LENGTH, 0x09)
    for cut in range(1, len(GOLDEN["job-request"][0])):
        decoder = FrameDecoder()
        assert decoder.feed(GOLDEN["job-request"][0][:cut]) == []
        [truncated] = decoder.flush()
        assert truncated.code == ErrorCode.TRUNCATED
