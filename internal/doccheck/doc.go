// Package doccheck holds no code. Its tests keep the project's own
// documents true to the tree: README.md stays a landing page that links
// every document of docs/, every relative link and image of README.md and
// docs/ resolves (anchors included), docs/architecture.md's code map names
// every package of the module, and no file cites a contract the
// repository does not carry.
package doccheck
