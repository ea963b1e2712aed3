/// An image an ``MPMediaItemArtwork`` request handler may return: anything with encoded
/// image bytes (PNG, JPEG). Not one of Apple's types: iOS's handler returns a `UIImage`,
/// which Linux lacks; `Data` conforms, and an app's own image type conforms by having
/// `pngData()`, as `UIImage` has.
public protocol MPMediaItemArtworkImage {
    /// The image, encoded (PNG, or any format a desktop shell reads).
    func pngData() -> Data?
}

extension Data: MPMediaItemArtworkImage {
    /// The bytes themselves.
    public func pngData() -> Data? { self }
}

/// The art of the item playing, shown through MPRIS's `mpris:artUrl`, which names a file.
///
/// Made from a request handler, as on iOS (it is asked once for an image of the bounds'
/// size, which is written to a file in the temporary directory), or from an image file or
/// its bytes.
///
/// `@unchecked Sendable`: its one mutable state, the file the image was written to, lives
/// under a lock; the request handler is called once, by the thread that sets the info.
public final class MPMediaItemArtwork: NSObject, @unchecked Sendable {
    /// The image's bounds, as given.
    public let bounds: CGRect
    private let source: Unchecked<(CGSize) -> Data?>
    private let file = Locked<String??>(nil)

    /// Art from a handler that draws it at a size, as iOS makes it.
    public init<Image: MPMediaItemArtworkImage>(boundsSize: CGSize, requestHandler: @escaping (CGSize) -> Image) {
        bounds = CGRect(origin: .zero, size: boundsSize)
        source = Unchecked { requestHandler($0).pngData() }
    }

    /// Art from an image file, which MPRIS shows as it is (not one of Apple's initializers).
    public init(contentsOf url: URL) {
        bounds = .zero
        source = Unchecked { _ in nil }
        file.withLock { $0 = .some(url.path) }
    }

    /// Art from an image's encoded bytes (PNG, JPEG; not one of Apple's initializers).
    public convenience init(data: Data) {
        self.init(boundsSize: .zero) { _ in data }
    }

    /// The image at `size`, encoded, from the request handler; nil for art made from a file.
    public func image(at size: CGSize) -> Data? { source.value(size) }

    /// The file MPRIS names: the one given, or the handler's image written once.
    var filePath: String? {
        file.withLock { file in
            if let known = file { return known }
            let path = source.value(bounds.size).flatMap(MPMediaItemArtwork.write)
            file = .some(path)
            return path
        }
    }

    /// Writes an image to a file of its own in the temporary directory.
    private static func write(_ data: Data) -> String? {
        let folder = FileManager.default.temporaryDirectory
            .appendingPathComponent("earshot-artwork-\(ProcessInfo.processInfo.processIdentifier)")
        let isJPEG = data.starts(with: [0xFF, 0xD8])
        let url = folder.appendingPathComponent(UUID().uuidString + (isJPEG ? ".jpg" : ".png"))
        do {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            try data.write(to: url)
            return url.path
        } catch {
            return nil
        }
    }
}
