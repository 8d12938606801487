# The Caravan node agent on every Nomad client: a system job, so each client VM runs exactly one.
# It registers the VM as a Caravan node (id = the Nomad node name), heartbeats, serves the CDP
# proxy (9223) and the WebDriver relay (4444), and listens on 127.0.0.1:9224 for the browser
# launchers that browser-session.nomad.hcl starts on the same VM.
#
# Secrets: put the shared HMAC key in a Nomad variable first (the agent verifies connection
# tokens with it and signs its own node credential, audience caravan-node):
#   nomad var put nomad/jobs/caravan-agent signing_key="$SERVICE_JWT_SIGNING_KEY"
# Run: nomad job run -var control_url=https://caravan.internal:8420 infra/nomad/caravan-agent.nomad.hcl

variable "control_url" {
  type        = string
  description = "URL the agents and launchers reach the control plane at (CARAVAN_CONTROL_URL)."
}

variable "capacity" {
  type    = number
  default = 16
}

job "caravan-agent" {
  type        = "system"
  datacenters = ["*"]

  group "agent" {
    network {
      port "cdp" {
        static = 9223
      }
      port "webdriver" {
        static = 4444
      }
    }

    restart {
      attempts = 10
      interval = "5m"
      delay    = "5s"
      mode     = "delay"
    }

    task "agent" {
      driver = "raw_exec"

      config {
        command = "/usr/bin/node"
        args    = ["/opt/caravan/bin/caravan.js", "agent"]
      }

      env {
        CARAVAN_NODE_ID       = "${node.unique.name}"
        CARAVAN_NOMAD_NODE_ID = "${node.unique.id}"
        CARAVAN_CONTROL_URL   = var.control_url
        AGENT_PUBLIC_HOST     = "${attr.unique.network.ip-address}"
        AGENT_CDP_PORT        = "${NOMAD_PORT_cdp}"
        AGENT_WEBDRIVER_PORT  = "${NOMAD_PORT_webdriver}"
        # Loopback only. The agent registers it and the control plane dispatches each browser
        # job with it (meta agent_port), so launchers find this agent at http://127.0.0.1:9224.
        AGENT_CONTROL_PORT    = "9224"
        AGENT_HEARTBEAT_MS    = "5000"
        NODE_CAPACITY         = "${var.capacity}"
        CHROMEDRIVER_PATH     = "/usr/bin/chromedriver"
        LOG_LEVEL             = "info"
      }

      template {
        destination = "secrets/agent.env"
        env         = true
        data        = <<EOT
SERVICE_JWT_SIGNING_KEY={{ with nomadVar "nomad/jobs/caravan-agent" }}{{ .signing_key }}{{ end }}
EOT
      }

      # The agent drops its routes and flushes its byte counts on SIGTERM.
      kill_signal  = "SIGTERM"
      kill_timeout = "10s"

      resources {
        cpu    = 200
        memory = 256
      }
    }
  }
}
