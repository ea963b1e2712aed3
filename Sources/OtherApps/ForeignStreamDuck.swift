/// One of another app's playback streams while the arbiter ducks it: the volume it had
/// before, per channel, and the volume the arbiter last set, in the sound server's units
/// (`pa_volume_t`, where 65536 is 100 % and the scale is cubic in amplitude).
///
/// The arbiter lowers the stream in ``rampSteps`` steps and, when the ducking ends, puts
/// back ``original`` only if the stream still has the volume it set: a different volume is
/// the user's, and stands (``volumeToRestore(current:)``).
package struct ForeignStreamDuck: Sendable, Hashable {
    /// The server's 100 % (`PA_VOLUME_NORM`).
    package static let normalVolume: UInt32 = 0x10000
    /// The stream's volume before the ducking, per channel.
    package let original: [UInt32]
    /// The volume the arbiter last set, per channel.
    package var lastSet: [UInt32]

    /// A stream about to be ducked, with its current volume.
    package init(original: [UInt32]) {
        self.original = original
        self.lastSet = original
    }

    /// The stream's volume at `gain` (linear amplitude, 0…1) of its original: each
    /// channel times the cube root of `gain`, the server's volume scale being cubic.
    package func volume(atGain gain: Float) -> [UInt32] {
        let clamped = gain.isNaN ? 1 : min(max(Double(gain), 0), 1)
        let factor = clamped == 0 ? 0 : Self.cubeRoot(clamped)
        return original.map { UInt32((Double($0) * factor).rounded()) }
    }

    /// The volumes of a ramp from the original to `gain` in `steps` steps, equal in
    /// decibels; the last is ``volume(atGain:)`` of `gain`.
    package func rampSteps(to gain: Float, steps: Int) -> [[UInt32]] {
        let count = max(steps, 1)
        let target = gain.isNaN ? 1 : min(max(Double(gain), 0), 1)
        if target == 0 { return Array(repeating: volume(atGain: 0), count: count) }
        return (1...count).map { step in
            volume(atGain: Float(Self.power(target, Double(step) / Double(count))))
        }
    }

    /// The volume to set when the ducking ends: ``original`` if the stream still has
    /// ``lastSet``, `nil` if the user changed it meanwhile (or its channels changed).
    package func volumeToRestore(current: [UInt32]) -> [UInt32]? {
        current == lastSet ? original : nil
    }

    private static func cubeRoot(_ x: Double) -> Double { power(x, 1.0 / 3.0) }

    /// `x` to the power `y` for 0 < x ≤ 1 (pure arithmetic, without libm): exp(y · ln x)
    /// by series, precise to well under one volume unit.
    private static func power(_ x: Double, _ y: Double) -> Double {
        if x == 1 || y == 0 { return 1 }
        return exp(y * log(x))
    }

    private static func log(_ x: Double) -> Double {
        // ln x = 2 atanh((x - 1) / (x + 1)); x in (0, 1] after halving by powers of two.
        var value = x, shift = 0.0
        while value < 0.5 { value *= 2; shift -= 1 }
        let t = (value - 1) / (value + 1), t2 = t * t
        var term = t, sum = 0.0
        for n in stride(from: 1.0, through: 61.0, by: 2.0) { sum += term / n; term *= t2 }
        return 2 * sum + shift * 0.693_147_180_559_945_3
    }

    private static func exp(_ x: Double) -> Double {
        var sum = 1.0, term = 1.0
        for n in 1...40 { term *= x / Double(n); sum += term }
        return sum
    }
}
