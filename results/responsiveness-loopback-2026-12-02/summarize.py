"""One round of ab.sh: each build's phases (load each way, foreign and self probes' p50, RPM), then after / before."""
import json
import sys

round_, before_path, after_path = sys.argv[1], sys.argv[2], sys.argv[3]


def phases(path):
    document = json.load(open(path))
    result = {}
    for phase in document["responsiveness"]["phases"]:
        load = sum(phase[way]["bytesPerSecond"] for way in ("download", "upload") if way in phase)
        self_p50 = phase["self"]["roundTrip"]["p50Nanoseconds"] if phase["self"]["answered"] else None
        result[phase["name"]] = (load, phase["foreign"]["roundTrip"]["p50Nanoseconds"], self_p50, phase["rpm"])
    return result


before, after = phases(before_path), phases(after_path)
for name in before:
    line = [f"round {round_} {name:8}"]
    for build, figures in (("before", before[name]), ("after", after[name])):
        load, foreign, self_p50, rpm = figures
        self_text = f"{self_p50 / 1e3:8.1f}" if self_p50 else "       -"
        line.append(f"{build}: load {load / 1e9:5.2f} GB/s foreign p50 {foreign / 1e3:8.1f} us self p50 {self_text} us "
                    f"RPM {rpm:9.0f}")
    ratio = after[name][3] / before[name][3]
    line.append(f"RPM after/before {ratio:.2f}")
    print("; ".join(line))
