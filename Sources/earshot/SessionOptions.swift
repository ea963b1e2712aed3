public import ArgumentParser
import Earshot
public import SessionPolicy

/// The audio-session options of the commands that play.
struct SessionOptions: ParsableArguments {
    @Option(help: ArgumentHelp(
        "The audio-session category: ambient, soloAmbient, playback, record or playAndRecord.", valueName: "CATEGORY"))
    var category: Category = .playback

    @Flag(help: "Mix with other audio instead of interrupting it (mixWithOthers).")
    var mix = false

    @Flag(help: "Lower other audio while this plays (duckOthers; implies mixing).")
    var duck = false

    var options: CategoryOptions {
        var options: CategoryOptions = []
        if mix { options.insert(.mixWithOthers) }
        if duck { options.insert(.duckOthers) }
        return options
    }
}

extension Category: ExpressibleByArgument {}
