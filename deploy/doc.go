// Package deploy holds no code. Its tests check the deployment files at the
// top of the repository — Dockerfile, .dockerignore and docker-compose.yml —
// and the Kubernetes manifests of deploy/kubernetes against the configuration (config.Variables, config.Load and Validate),
// the Makefile's production build and each other, so that a renamed
// variable, a changed port or a new required setting breaks `make test`
// rather than `docker compose up`.
//
// They live in their own package, not in cmd/touchpoint, so that they build
// in seconds (no embedded Temporal server) and run with -race in `make test`.
package deploy
