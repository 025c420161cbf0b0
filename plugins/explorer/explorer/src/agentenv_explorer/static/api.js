// The explorer's API from the page: JSON fetches and live streams, carrying the token when the server needs one.
// The token arrives once in the URL (`?token=`), is kept for the tab's session, and is removed from the address bar.

const params = new URLSearchParams(location.search);
if (params.has("token")) {
  sessionStorage.setItem("agentenv-token", params.get("token"));
  history.replaceState(null, "", location.pathname + location.hash);
}
const token = () => sessionStorage.getItem("agentenv-token");

export class ApiError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

export function withToken(path) {
  if (!token()) return path;
  return path + (path.includes("?") ? "&" : "?") + "token=" + encodeURIComponent(token());
}

export async function api(path, options = {}) {
  const headers = { ...(options.headers || {}) };
  if (token()) headers.Authorization = `Bearer ${token()}`;
  if (options.body !== undefined) headers["Content-Type"] = "application/json";
  const answer = await fetch(path, {
    method: options.method || "GET",
    headers,
    body: options.body === undefined ? undefined : JSON.stringify(options.body),
  });
  const data = await answer.json().catch(() => ({ error: `HTTP ${answer.status}` }));
  if (!answer.ok) throw new ApiError(answer.status, data.error || `HTTP ${answer.status}`);
  return data;
}

export function query(values) {
  const kept = Object.entries(values).filter(([, v]) => v !== undefined && v !== null && v !== "");
  return kept.length ? "?" + new URLSearchParams(kept).toString() : "";
}

// Server-sent events of a run: onEvent(kind, data) for each, onEnd() once the server closes the stream.
export function follow(runId, onEvent, onEnd) {
  const source = new EventSource(withToken(`/api/runs/${encodeURIComponent(runId)}/events`));
  const kinds = ["run_started", "step_started", "step_finished", "tool_called", "run_finished", "status",
    "process_exited"];
  for (const kind of kinds) source.addEventListener(kind, (e) => onEvent(kind, JSON.parse(e.data)));
  source.addEventListener("end", () => { source.close(); onEnd(); });
  source.onerror = () => { source.close(); onEnd(); };
  return source;
}
