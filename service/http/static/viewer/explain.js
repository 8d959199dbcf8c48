// explain.js — what the viewer says to a person besides the board: its own words in the
// browser's language (English, French), the first-visit page, each game's piece legend, and
// the places an event changed (marked on the board).

export const lang = (navigator.languages || [navigator.language || "en"])
  .map((l) => l.toLowerCase().split("-")[0])
  .find((l) => l === "en" || l === "fr") || "en";

const WORDS = {
  en: {
    welcome: "Welcome to Manifest",
    intro: "No game has been played on this server yet. To start one:",
    create: "Create a game with two players (the answer holds each seat's token):",
    bot: "Or let a bot play a whole game, to watch it here:",
    docs: "Every call is in the API documentation",
    then: "The game then appears in this list: open it to replay it event by event.",
    legend: "Legend",
    asSeat: (seat, name) => `viewed as seat ${seat}${name ? ` (${name})` : ""}`,
    asSpectator: "viewed as a spectator",
    at: (n, total) => `as of event ${n} / ${total}`,
    toAct: "to act",
    changed: "changed",
    // why a game ended when not by its rules (its result's `reason`, docs/api.md "Ending a game")
    resigned: (winners, resigned) =>
      winners ? `${winners} won, because ${resigned} resigned` : `no one won, because ${resigned} resigned`,
    aborted: (who) =>
      `no one won, because ${who} called the game off before every seat had moved: it ends with no result`,
    and: " and ",
  },
  fr: {
    welcome: "Bienvenue sur Manifest",
    intro: "Aucune partie n’a encore été jouée sur ce serveur. Pour en commencer une :",
    create: "Créez une partie à deux joueurs (la réponse donne le jeton de chaque place) :",
    bot: "Ou laissez un robot jouer toute une partie, pour la suivre ici :",
    docs: "Chaque appel est dans la documentation de l’API",
    then: "La partie apparaît alors dans cette liste : ouvrez-la pour la rejouer événement par événement.",
    legend: "Légende",
    asSeat: (seat, name) => `vu depuis la place ${seat}${name ? ` (${name})` : ""}`,
    asSpectator: "vu en spectateur",
    at: (n, total) => `à l’événement ${n} / ${total}`,
    toAct: "à jouer",
    changed: "changé",
    resigned: (winners, resigned) =>
      winners ? `${winners} gagne, car ${resigned} abandonne` : `personne ne gagne, car ${resigned} abandonne`,
    aborted: (who) =>
      `personne ne gagne, car ${who} annule la partie avant que chacun ait joué : elle s’achève sans résultat`,
    and: " et ",
  },
};

export const t = WORDS[lang];

// Each game's pieces, as its picture draws them: [swatch colour or symbol, English, French].
const LEGENDS = {
  "jolly-cargo": [
    ["#d1382f", "red crate / ship", "caisse / navire rouge"],
    ["#2f6fd1", "blue crate / ship", "caisse / navire bleu"],
    ["#2f9e4f", "green crate / ship", "caisse / navire vert"],
    ["#e8c22a", "yellow crate / ship", "caisse / navire jaune"],
    ["#999", "face-down crate", "caisse face cachée"],
    ["D", "dockhand (stackable, pushes 1 crate)", "docker (empilable, pousse 1 caisse)"],
    ["B", "burly worker (pushes 2 crates)", "ouvrier colossal (pousse 2 caisses)"],
    ["M", "mule (pushes or pulls a crate 2 squares)", "mule (pousse ou tire une caisse de 2 cases)"],
    ["E", "elephant", "éléphant"],
  ],
  "cargo-empire": [
    ["#8a5a2b", "brown cargo", "marchandise marron"],
    ["#f4f1ea", "white cargo", "marchandise blanche"],
    ["#8c8f94", "grey cargo", "marchandise grise"],
    ["#f08a24", "orange cargo", "marchandise orange"],
    ["●", "city (its level: posts it holds)", "ville (son niveau : ses comptoirs)"],
    ["■", "a player's trading post", "comptoir d’un joueur"],
  ],
  "empire-builder": [
    ["━", "a player's track (its colour)", "voie d’un joueur (sa couleur)"],
    ["■", "a player's train", "train d’un joueur"],
    ["⬢", "major city", "grande ville"],
    ["○", "cities supplying the load asked", "villes fournissant la cargaison demandée"],
  ],
  "curious-cargo": [
    ["#d1362f", "red goods", "marchandises rouges"],
    ["#138f87", "teal goods", "marchandises turquoise"],
    ["#7b3fa0", "purple goods", "marchandises violettes"],
    ["▭", "conveyor tile (its level)", "tuile de convoyeur (son niveau)"],
    ["▶", "truck at a dock", "camion à un quai"],
  ],
};

export function legend(game) {
  return (LEGENDS[game] || []).map(([swatch, en, fr]) => ({
    swatch,
    colour: swatch.startsWith("#"),
    text: lang === "fr" ? fr : en,
  }));
}

// The places an event names (squares, cities, mileposts), as the pictures' data-* attributes
// name them: [attribute, value] pairs.
export function places(event) {
  const out = [];
  const seen = new Set();
  const add = (attr, value) => {
    if (value === null || value === undefined) return;
    const key = `${attr}=${value}`;
    if (!seen.has(key)) {
      seen.add(key);
      out.push([attr, String(value)]);
    }
  };
  const square = (v) => typeof v === "string" && /^[a-z]\d{1,2}$/.test(v);
  const walk = (value, key) => {
    if (Array.isArray(value)) {
      for (const item of value) walk(item, key);
    } else if (value && typeof value === "object") {
      for (const [k, v] of Object.entries(value)) {
        if (k === "crates" && !Array.isArray(v)) for (const sq of Object.keys(v)) add("data-square", sq);
        walk(v, k);
      }
    } else if (["square", "at", "to", "frm", "squares", "from"].includes(key) && square(value)) {
      add("data-square", value);
    } else if (["city", "origin", "destination"].includes(key) && typeof value === "string") {
      add("data-city", value);
    } else if (["milepost", "path"].includes(key) && Number.isInteger(value)) {
      add("data-milepost", value);
    }
  };
  walk(event && event.data, "");
  return out;
}

// Mark the board's pieces at the event's places: a frame over each (a div.change-mark laid
// over the picture, which itself stays the server's SVG, untouched); the number marked.
export function markChanges(board, event) {
  for (const old of board.querySelectorAll(".change-mark")) old.remove();
  const svg = board.querySelector("svg");
  let marked = 0;
  if (!svg) return marked;
  const origin = board.getBoundingClientRect();
  for (const [attr, value] of places(event)) {
    const v = CSS.escape(value);
    const q = attr === "data-milepost"
      ? `[data-milepost="${v}"], [data-from="${v}"], [data-to="${v}"]`
      : `[${attr}="${v}"]`;
    for (const el of svg.querySelectorAll(q)) {
      const box = el.getBoundingClientRect();
      if (!box.width && !box.height) continue;
      const mark = document.createElement("div");
      mark.className = "change-mark";
      mark.dataset.place = `${attr.slice(5)}=${value}`;
      mark.style.left = `${box.left - origin.left - 3}px`;
      mark.style.top = `${box.top - origin.top - 3}px`;
      mark.style.width = `${box.width + 6}px`;
      mark.style.height = `${box.height + 6}px`;
      board.append(mark);
      marked += 1;
    }
  }
  board.dataset.changed = String(marked);
  return marked;
}

export function firstVisit(h, origin) {
  const create =
    `curl -s -X POST ${origin}/v1/games -H 'content-type: application/json' \\\n` +
    `  -d '{"game": "jolly-cargo", "seats": 2, "players": ["ann", "bob"]}'`;
  const bot = `python examples/bot.py ${origin} cargo-empire --delay 0.5`;
  return h(
    "div",
    { class: "card", id: "welcome" },
    h("h2", {}, t.welcome),
    h("p", {}, t.intro),
    h("ol", {},
      h("li", {}, t.create, h("pre", {}, create)),
      h("li", {}, t.bot, h("pre", {}, bot)),
      h("li", {}, h("a", { href: "/schema", id: "api-docs" }, t.docs), " (/schema)."),
    ),
    h("p", {}, t.then),
  );
}
