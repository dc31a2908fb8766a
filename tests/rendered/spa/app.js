// A single-page app's client: the server sends the same empty shell for every page; this script
// reads the path, fetches the post (or the list of posts) as JSON and writes the page.
const root = document.getElementById("root");

function element(tag, attributes, ...children) {
  const node = document.createElement(tag);
  Object.entries(attributes || {}).forEach(([name, value]) => node.setAttribute(name, value));
  children.forEach((child) => node.append(child));
  return node;
}

function day(iso) {
  return new Date(iso).toLocaleDateString("en-GB", {day: "numeric", month: "long", year: "numeric", timeZone: "UTC"});
}

async function showIndex() {
  const index = await (await fetch("/api/posts.json")).json();
  document.title = index.name;
  const list = element("ul", {class: "posts"});
  index.posts.forEach((post) => list.append(element("li", {},
    element("a", {href: `/posts/${post.slug}/`}, post.title), " ", element("time", {datetime: post.published}, day(post.published)))));
  root.append(element("header", {}, element("h1", {}, index.name)), element("main", {}, list));
}

async function showPost(slug) {
  const post = await (await fetch(`/api/posts/${slug}.json`)).json();
  document.title = `${post.title} | Tidewater`;
  const article = element("article", {},
    element("h1", {}, post.title),
    element("p", {class: "byline"}, "By ", element("span", {class: "author"}, post.author), " on ",
            element("time", {datetime: post.published}, day(post.published))),
    ...post.paragraphs.map((text) => element("p", {}, text)));
  root.append(element("header", {}, element("a", {href: "/"}, "Tidewater")), element("main", {}, article));
}

const match = location.pathname.match(/^\/posts\/([^/]+)\/?$/);
(match ? showPost(match[1]) : showIndex());
