package client

import (
	"time"

	"github.com/loadlab/loadlab/latency"
	"github.com/loadlab/loadlab/mockservice"
	"github.com/loadlab/loadlab/models"
)

// AdmissionEndpoint configures a mock service whose enrichment station is
// the admission model's endpoint: the scenario's workers, fixed service
// time and queue, 429 when full, at the given time scale, with a tie window
// of tie model seconds. POST to /enrich to load it.
func AdmissionEndpoint(sc models.AdmissionScenario, scale, tie float64) mockservice.Config {
	cfg := mockservice.DefaultConfig()
	cfg.Listen = "127.0.0.1:0"
	cfg.TimeScale = scale
	cfg.Enrichment = mockservice.StationConfig{Workers: sc.Workers, Queue: sc.Queue, RejectStatus: 429,
		TieWindow: time.Duration(tie * scale * float64(time.Second))}
	const profile = "admission"
	cfg.Profiles[profile] = mockservice.Profile{
		Enrichment: latency.Spec{Kind: "fixed", Value: time.Duration(sc.ServiceTime) * time.Second},
		Records:    cfg.Profiles[mockservice.ProfileHealthy].Records,
	}
	cfg.Profile = profile
	return cfg
}
