# One browser session = one dispatch of this parameterized batch job. The control plane
# dispatches it with the session's meta; its one task is the browser launcher, which finds the
# node agent on the same VM at http://127.0.0.1:<agent_port>, starts Chromium, reports READY
# and, on its kill signal, closes the browser (saving the profile) and reports STOPPED.
#
# browser-session.json is the same job in Nomad's JSON form: the control plane registers it at
# start when Nomad does not have it yet (SCHEDULER=nomad). Keep the two in step.
# Run by hand: nomad job run infra/nomad/browser-session.nomad.hcl

job "caravan-browser-session" {
  type        = "batch"
  datacenters = ["*"]
  priority    = 50

  parameterized {
    payload       = "forbidden"
    meta_required = ["session_id"]
    meta_optional = [
      "launcher_token", "keep_alive", "viewport", "control_url", "node_id", "agent_port",
      "context_get_url", "context_put_url", "context_max_bytes",
    ]
  }

  # Defaults of the optional meta: an unset NOMAD_META_x would reach the launcher uninterpolated.
  meta {
    launcher_token    = ""
    keep_alive        = "false"
    viewport          = ""
    control_url       = "http://127.0.0.1:8420"
    node_id           = ""
    agent_port        = "9224"
    context_get_url   = ""
    context_put_url   = ""
    context_max_bytes = ""
  }

  group "browser" {
    count = 1

    # A browser that dies is a failed session, never a restarted one: the caller's CDP
    # connection and page state are gone either way.
    restart {
      attempts = 0
      mode     = "fail"
    }

    reschedule {
      attempts  = 0
      unlimited = false
    }

    ephemeral_disk {
      size = 300
    }

    task "launcher" {
      driver = "raw_exec"

      config {
        command = "/usr/bin/node"
        args    = ["/opt/caravan/bin/caravan.js", "launcher"]
      }

      env {
        CARAVAN_SESSION_ID        = "${NOMAD_META_session_id}"
        CARAVAN_LAUNCHER_TOKEN    = "${NOMAD_META_launcher_token}"
        CARAVAN_CONTROL_URL       = "${NOMAD_META_control_url}"
        CARAVAN_AGENT_URL         = "http://127.0.0.1:${NOMAD_META_agent_port}"
        CARAVAN_NODE_ID           = "${NOMAD_META_node_id}"
        CARAVAN_KEEP_ALIVE        = "${NOMAD_META_keep_alive}"
        CARAVAN_VIEWPORT          = "${NOMAD_META_viewport}"
        CARAVAN_CONTEXT_GET_URL   = "${NOMAD_META_context_get_url}"
        CARAVAN_CONTEXT_PUT_URL   = "${NOMAD_META_context_put_url}"
        CARAVAN_CONTEXT_MAX_BYTES = "${NOMAD_META_context_max_bytes}"
        CARAVAN_WORK_DIR          = "${NOMAD_TASK_DIR}"
        CHROME_PATH               = "/usr/bin/chromium"
        LOG_LEVEL                 = "info"
      }

      # SIGTERM makes the launcher close Chromium cleanly and save the context profile;
      # 30 s leaves room for a large profile upload before Nomad sends SIGKILL.
      kill_signal  = "SIGTERM"
      kill_timeout = "30s"

      resources {
        cpu    = 1000 # MHz
        memory = 1024 # MiB
      }

      logs {
        max_files     = 2
        max_file_size = 10
      }
    }
  }
}
