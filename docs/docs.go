// Package docs is letterbox's documentation: the Markdown files of this directory, embedded so
// that `letterbox help TOPIC` prints the parts of them marked for the topic. The help and the
// documentation are then one text, which cannot drift apart. Not an API: the binary reads it.
package docs

import "embed"

// Files are the Markdown files of this directory.
//
//go:embed *.md
var Files embed.FS
