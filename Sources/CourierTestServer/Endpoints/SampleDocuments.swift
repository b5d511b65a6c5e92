/// Small fixed documents for /html, /json, /xml and /encoding/utf8 (the server's own text).
enum SampleDocuments {
    static let html = """
        <!DOCTYPE html>
        <html>
          <head><title>Courier test server</title></head>
          <body>
            <h1>Courier</h1>
            <p>A Swift HTTP client, tested against this page.</p>
          </body>
        </html>

        """

    static let json: TestServerJSON = [
        "slideshow": [
            "author": "Courier", "date": "2026-01-01", "title": "Sample Slide Show",
            "slides": [
                ["title": "Request serialization", "type": "all"],
                ["title": "Multipart", "type": "all", "items": ["streaming", "escaped names"]],
            ],
        ]
    ]

    static let xml = """
        <?xml version='1.0' encoding='us-ascii'?>
        <slideshow title="Sample Slide Show" author="Courier">
          <slide type="all"><title>Request serialization</title></slide>
          <slide type="all">
            <title>Multipart</title>
            <item>streaming</item>
            <item>escaped names</item>
          </slide>
        </slideshow>

        """

    static let utf8 = """
        <h1>UTF-8 sample</h1>
        <p>Deutsch: Grüße aus Köln — straße</p>
        <p>Ελληνικά: Καλημέρα κόσμε</p>
        <p>Русский: Здравствуй, мир</p>
        <p>日本語: こんにちは世界</p>
        <p>中文: 你好，世界</p>
        <p>Emoji: 📦 🚚 ✉️</p>
        <p>Math: ∀x ∈ ℝ, x² ≥ 0</p>

        """
}
