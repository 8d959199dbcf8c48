// api.js — the REST calls the viewer makes; a seat token (if given) goes in Authorization.

export class Api {
  constructor(token) {
    this.token = token || null;
  }

  headers(extra = {}) {
    return this.token ? { ...extra, Authorization: `Bearer ${this.token}` } : extra;
  }

  async json(path) {
    const r = await fetch(path, { headers: this.headers({ Accept: "application/json" }) });
    const body = await r.json().catch(() => null);
    if (!r.ok) {
      const why = body && body.detail ? `${body.code}: ${body.detail}` : `HTTP ${r.status}`;
      throw new Error(why);
    }
    return body;
  }

  async svg(path) {
    const r = await fetch(path, { headers: this.headers({ Accept: "image/svg+xml" }) });
    if (!r.ok) throw new Error(`picture: HTTP ${r.status}`);
    return r.text();
  }

  async allEvents(id, after = 0) {
    const out = [];
    let next = after;
    while (next !== null) {
      const page = await this.json(`/v1/games/${id}/events?after=${next}&limit=1000`);
      out.push(...page.events);
      next = page.next;
    }
    return out;
  }

  // Server-Sent Events over fetch (EventSource cannot send an Authorization header).
  // Calls onChange(doc) per "change" event; returns a function that stops the stream.
  follow(id, onChange, onError) {
    const controller = new AbortController();
    (async () => {
      const r = await fetch(`/v1/games/${id}/stream`, {
        headers: this.headers({ Accept: "text/event-stream" }),
        signal: controller.signal,
      });
      if (!r.ok) throw new Error(`stream: HTTP ${r.status}`);
      const reader = r.body.pipeThrough(new TextDecoderStream()).getReader();
      let buffer = "";
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buffer += value.replace(/\r\n/g, "\n");
        let cut;
        while ((cut = buffer.indexOf("\n\n")) >= 0) {
          const block = buffer.slice(0, cut);
          buffer = buffer.slice(cut + 2);
          const lines = block.split("\n");
          const named = lines.find((line) => line.startsWith("event:"));
          const kind = named ? named.slice(6).trim() : "change";
          const data = lines
            .filter((line) => line.startsWith("data:"))
            .map((line) => line.slice(5).replace(/^ /, ""))
            .join("\n");
          // "change": the caller's document; other messages ("sentences") are not changes
          if (data && kind === "change") onChange(JSON.parse(data));
        }
      }
    })().catch((error) => {
      if (error.name !== "AbortError" && onError) onError(error);
    });
    return () => controller.abort();
  }
}
