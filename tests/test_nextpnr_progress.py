"""The heartbeat of a long place and route (synth/tools.py ``NextpnrProgress``, ``run_tool``'s
``on_output``): nextpnr's phase, the router's iteration and overused wires, the time so far and
the matching record's time.

The log lines are real nextpnr output: YoWASP nextpnr-ecp5 0.11.1 (nextpnr-0.11.1) placing and
routing the ``bench-priority16`` block at an unreachable 400 MHz on an LFE5U-85F
(``python -m chessaccel.synth bench-priority16 --freq 400``; router1 with ``--router router1``),
lines copied from its nextpnr.out; "..." marks lines left out.
"""

import json
import sys

from chessaccel.synth.board import _place_and_route_seconds
from chessaccel.synth.records import RECORDS, board_record_path
from chessaccel.synth.tools import NextpnrProgress, run_tool

PACK = """\
Info: Logic utilisation before packing:
Info:     Total LUT4s:       319/83640     0%
Info: Packing IOs..
Info: Packing constants..
"""
PLACE = """\
Info: Placed 0 cells based on constraints.
Info: Creating initial analytic placement for 213 cells, random placement wirelen = 25943.
Info:     at initial placer iter 0, wirelen = 323
Info:     at initial placer iter 1, wirelen = 291
Info: Running main analytical placer, max placement attempts per cell = 21012.
Info:     at iteration #1, type ALL: wirelen solved = 295, spread = 1220, legal = 1280; time = 0.09s
Info:     at iteration #2, type ALL: wirelen solved = 359, spread = 867, legal = 926; time = 0.01s
"""
REFINE = """\
Info: Running simulated annealing placer for refinement.
Info:   at iteration #1: temp = 0.000000, timing cost = 248, wirelen = 904
Info:   at iteration #5: temp = 0.000000, timing cost = 260, wirelen = 686
"""
ROUTE = """\
Info: Routing globals...
Info:     routing clock net $glbnet$clk$TRELLIS_IO_IN using global 0
Info: Running router2...
Info: Setting up routing resources...
Info: Running main router loop...
"""
ITERATIONS = """\
Info:     iter=1 wires=4222 overused=257 overuse=315 archfail=NA
Info:     iter=2 wires=4210 overused=174 overuse=194 archfail=NA
"""
LAST = """\
Info:     iter=21 wires=4273 overused=0 overuse=0 archfail=0
Info: Router2 time 13.48s
Info: Running router1 to check that route is legal...

Info: Routing..
Info: Setting up routing queue.
Info: Routing 0 arcs.
Info:            |   (re-)routed arcs  |   delta    | remaining|       time spent     |
Info:    IterCnt |  w/ripup   wo/ripup |  w/r  wo/r |      arcs| batch(sec) total(sec)|
Info:          0 |        0          0 |    0     0 |         0|       0.03       0.03|
"""
DONE = """\
Info: Routing complete.
Info: Router1 time 0.03s
Info: Checksum: 0xafd3974d

Info: Critical path report for clock '$glbnet$clk$TRELLIS_IO_IN' (posedge -> posedge):
"""
# router1 alone (--router router1), same design
ROUTER1 = """\
Info: Routing..
Info: Setting up routing queue.
Info: Routing 1412 arcs.
Info:            |   (re-)routed arcs  |   delta    | remaining|       time spent     |
Info:    IterCnt |  w/ripup   wo/ripup |  w/r  wo/r |      arcs| batch(sec) total(sec)|
Info:       1000 |      474        525 |  474   525 |       974|       0.55       0.55|
Info:       2000 |      915       1045 |  441   520 |       483|       0.32       0.87|
"""


def test_the_phases_and_iterations_of_a_real_log():
    watch = NextpnrProgress()
    assert watch.describe() is None
    assert watch.heartbeat(42) == "nextpnr: 0.7 min so far"
    steps = [(PACK, "packing"),
             (PLACE, "placing, placer iteration 2"),
             (REFINE, "placing, placer iteration 5"),
             (ROUTE, "routing"),
             (ITERATIONS, "routing, router2 iteration 2, 174 overused wires"),
             (LAST, "checking the route"),
             (DONE, "timing analysis")]
    for text, said in steps:
        watch.feed(text)
        assert watch.describe() == said, text


def test_a_line_cut_between_two_reads_is_read_whole():
    watch = NextpnrProgress()
    watch.feed(ROUTE)
    text = "Info:     iter=37 wires=210331 overused=1204 overuse=1310 archfail=NA\n"
    watch.feed(text[:23])
    assert watch.describe() == "routing"
    watch.feed(text[23:])
    assert watch.describe() == "routing, router2 iteration 37, 1,204 overused wires"
    assert watch.heartbeat(12.3 * 60, 22.1 * 60) == (
        "nextpnr: routing, router2 iteration 37, 1,204 overused wires, 12.3 min so far "
        "(the record's run: 22.1 min)")


def test_router1_says_its_arcs():
    watch = NextpnrProgress()
    watch.feed(PLACE + ROUTER1)
    assert watch.describe() == "routing, router1 iteration 2,000, 483 arcs remaining"


def test_a_new_phase_forgets_the_last_ones_iteration():
    watch = NextpnrProgress()
    watch.feed(PLACE + "Info: Routing globals...\n")
    assert watch.describe() == "routing"


def test_the_record_time_is_its_place_and_route():
    record = json.loads(board_record_path("ulx3s-85f", 3, RECORDS, 2).read_text())
    seconds = _place_and_route_seconds(record)
    assert seconds == next(v for k, v in record["seconds"].items() if k.startswith("nextpnr"))
    assert 0 < seconds < record["seconds"]["total"]
    assert _place_and_route_seconds(None) is None
    assert _place_and_route_seconds({"seconds": {"elaborate": 1.0}}) is None


def test_run_tool_hands_the_log_over_as_it_grows(tmp_path):
    """A real process writing its log over a second: the heartbeats see it grow."""
    script = ("import sys, time\n"
              "for i in range(1, 6):\n"
              "    print(f'Info:     iter={i} wires=100 overused={10 - i} overuse=0 archfail=NA',"
              " file=sys.stderr, flush=True)\n"
              "    time.sleep(0.25)\n")
    watch = NextpnrProgress()
    watch.feed("Info: Running router2...\n")
    seen = []
    status, text, seconds = run_tool([sys.executable, "-c", script], tmp_path, "tool.out",
                                     lambda s: seen.append(watch.describe()), heartbeat_s=0.3,
                                     on_output=watch.feed)
    assert status == 0 and text.count("iter=") == 5 and seconds >= 1.0
    assert len(seen) >= 2
    assert seen[0].startswith("routing, router2 iteration ")
    assert seen[0] != seen[-1]          # it moved on between two heartbeats
