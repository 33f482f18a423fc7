package metrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

func newReplicaReads() *prometheus.CounterVec {
	return prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "touchpoint_db_replica_reads_total",
		Help: "Reads the read replica could serve (public reads, stats, lists), by where they went: replica; own_write (the primary: the client wrote a moment ago); lagging, down (the primary: the replica is too far behind, or does not answer).",
	}, []string{"outcome"})
}

// ReplicaRead counts a read the read replica could serve, by outcome
// (pg.ReadReplica, ReadOwnWrite, ReadLagging, ReadDown).
func (s *Set) ReplicaRead(outcome string) {
	if s != nil {
		s.replicaReads.WithLabelValues(outcome).Inc()
	}
}

// WatchReplica exports the read replica's state, as its last probe found
// it: touchpoint_db_replica_lag_seconds (-1 when it does not answer) and
// touchpoint_db_replica_fallback (1 while the reads it could serve go to
// the primary). status is read at every scrape; it reads no database.
func (s *Set) WatchReplica(status func() (lag time.Duration, up, serving bool)) {
	if s == nil {
		return
	}
	s.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "touchpoint_db_replica_lag_seconds",
		Help: "How far the read replica is behind the primary, measured every second against the primary's WAL position (-1: it does not answer).",
	}, func() float64 {
		lag, up, _ := status()
		if !up {
			return -1
		}
		return lag.Seconds()
	}))
	s.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "touchpoint_db_replica_fallback",
		Help: "1 while the reads the read replica could serve go to the primary, because it lags more than 30 s or does not answer.",
	}, func() float64 {
		if _, _, serving := status(); serving {
			return 0
		}
		return 1
	}))
}
