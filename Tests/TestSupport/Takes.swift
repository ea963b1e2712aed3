/// Runs a real-time check up to `times` times, until a take finds nothing wrong, printing
/// each take's result after `label` (`label, take 2: …`); returns what the last take found
/// (empty when one held), for the test to record. For checks whose environment, not the
/// code, misses now and then (a graph cycle lost on a loaded machine): a miss in every take
/// still fails.
public func bestOfTakes(
    _ label: String, times: Int = 3, held: String, _ take: () async throws -> [String]
) async rethrows -> [String] {
    var problems: [String] = []
    for number in 1...times {
        problems = try await take()
        print("\(label), take \(number): \(problems.isEmpty ? held : problems.joined(separator: "; "))")
        if problems.isEmpty { break }
    }
    return problems
}
