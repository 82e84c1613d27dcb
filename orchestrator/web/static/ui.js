// AutoBuild's page: its live parts, with no inline script (the Content-Security-Policy allows none). Everything
// from the run is put in the page as text (textContent), never as HTML.
"use strict";

const STATES = {"approved": "approved", "approved-unverified": "unverified", "failed": "failed", "aborted": "aborted",
  "blocked": "blocked", "conflict": "conflict", "skipped": "skipped", "replaced": "replaced", "not run": "notrun",
  "pending": "notrun", "": "notrun", "cancelled": "skipped", "waiting for an answer": "blocked"};
const stateClass = (status) => STATES[status] || (status.startsWith("error") ? "erred" : "running");
const SHOWN = ["status", "decision", "passed", "reason", "summary", "rationale", "detail", "tool", "note", "notes",
  "text", "question", "question_id"];
const usd = (value) => "$" + Number(value || 0).toFixed(4);

const drawn = [];
const draw = (pre) => {
  if (!window.mermaid) {
    return Promise.resolve();
  }
  pre.removeAttribute("data-processed");
  return window.mermaid.run({nodes: [pre]}).catch((error) => {
    const said = document.getElementById("render-error");
    if (said) {
      said.textContent = "The picture could not be drawn: " + error;
    }
  });
};

const drawAll = () => {
  if (!window.mermaid) {
    document.body.dataset.rendered = "none";
    return;
  }
  window.mermaid.initialize({startOnLoad: false, securityLevel: "strict",
    theme: matchMedia("(prefers-color-scheme: dark)").matches ? "dark" : "default"});
  document.querySelectorAll("pre.mermaid").forEach((pre) => {
    pre.dataset.source = pre.textContent;
    drawn.push(draw(pre));
  });
  Promise.all(drawn).then(() => { document.body.dataset.rendered = "yes"; });
};

const setField = (row, field, text, badge) => {
  const cell = row.querySelector(`[data-field="${field}"]`);
  if (cell === null || cell.textContent === text) {
    return;
  }
  cell.textContent = text;
  if (badge) {
    cell.className = "badge " + stateClass(text);
  }
};

const showState = (state) => {
  if (state.missing) {
    return;
  }
  Object.entries(state.tasks).forEach(([task, row]) => {
    document.querySelectorAll(`[data-task="${CSS.escape(task)}"]`).forEach((element) => {
      setField(element, "status", row.status, true);
      setField(element, "turn", String(row.turn), false);
      setField(element, "cost_usd", usd(row.cost_usd), false);
    });
  });
  const cost = document.querySelector('[data-field="feature-cost"]');
  if (cost) {
    cost.textContent = usd(state.cost_usd);
  }
  const chart = document.getElementById("flowchart");
  if (chart && chart.dataset.source !== state.flowchart) {
    chart.dataset.source = state.flowchart;
    chart.textContent = state.flowchart;
    draw(chart);
  }
  const asked = [...document.querySelectorAll("section.question")].map((s) => s.id.slice(2)).sort().join(" ");
  if (state.questions.slice().sort().join(" ") !== asked) {
    location.reload();  // a question came or went: its form is drawn by the server
  }
  const badge = document.getElementById("run-state");
  if (badge && (state.finished || state.stopped)) {
    badge.textContent = state.finished ? "finished" : state.stopped;
  }
  document.body.dataset.updates = String(Number(document.body.dataset.updates || 0) + 1);
};

const follow = (url, handlers) => {
  const source = new EventSource(url);
  Object.entries(handlers).forEach(([kind, handle]) => {
    source.addEventListener(kind, (message) => handle(JSON.parse(message.data)));
  });
  source.addEventListener("end", () => source.close());
  return source;
};

const logLine = (event) => {
  const blank = (value) => value === null || value === "" || (Array.isArray(value) && value.length === 0);
  const said = SHOWN.filter((key) => key in event && !blank(event[key])).map((key) => {
    const value = typeof event[key] === "string" ? event[key] : JSON.stringify(event[key]);
    return `${key}=${value.length > 200 ? value.slice(0, 200) + "…" : value}`;
  });
  const turn = event.turn === undefined ? "" : ` turn ${event.turn}`;
  const item = document.createElement("li");
  item.value = event.id;
  item.dataset.id = String(event.id);
  item.textContent = `${event.time} ${event.event}${turn} ${said.join(" ")}`;
  return item;
};

const sendForm = (form, submitter) => {
  const body = new URLSearchParams(new FormData(form));
  if (submitter && submitter.name) {
    body.set(submitter.name, submitter.value);
  }
  const said = document.getElementById(form.dataset.said);
  said.className = "said";
  said.textContent = "sending…";
  fetch(form.action, {method: "POST", body, headers: {"Accept": "application/json"}, credentials: "same-origin"})
    .then((response) => response.json().then((data) => [response.ok, data.message]))
    .then(([ok, message]) => {
      said.className = "said " + (ok ? "ok" : "refused");
      said.textContent = message;
      if (ok && form.querySelector("textarea")) {
        form.querySelector("textarea").value = "";
      }
    })
    .catch((error) => { said.className = "said refused"; said.textContent = String(error); });
};

document.addEventListener("DOMContentLoaded", () => {
  drawAll();
  document.querySelectorAll("form[data-said]").forEach((form) => {
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      sendForm(form, event.submitter);
    });
  });
  if (document.body.dataset.live) {
    follow(document.body.dataset.live, {state: showState});
  }
  const log = document.getElementById("log");
  if (log && document.body.dataset.log) {
    follow(document.body.dataset.log, {log: (event) => {
      if (!log.querySelector(`li[data-id="${event.id}"]`)) {
        log.appendChild(logLine(event));
      }
    }});
  }
});
