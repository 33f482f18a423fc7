package authserver

// LimiterSizes reports how many (client, address) and address buckets the
// failure limiter holds.
func LimiterSizes(s *Server) (pairs, addrs int) { return s.failures.sizes() }
