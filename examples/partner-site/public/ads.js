// Reports each ad's impression once it is at least half visible for the first time, by asking
// this site's own server (which holds the API key) to report it. The key never reaches the page.
const observer = new IntersectionObserver(
  (entries) => {
    for (const entry of entries) {
      if (!entry.isIntersecting) continue;
      observer.unobserve(entry.target);
      fetch(entry.target.dataset.impression, { method: 'POST', keepalive: true }).catch(() => undefined);
    }
  },
  { threshold: 0.5 },
);
for (const ad of document.querySelectorAll('[data-impression]')) observer.observe(ad);
