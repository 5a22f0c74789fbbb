/* Bilingual reading (see conf/bilingual.py): the #bilingual-toggle checkbox
 * sets the "bilingual" class on <html>, which shows the English original
 * under each translated paragraph. The choice is kept in localStorage, so it
 * follows the reader from page to page; it is off until they tick it. */
(() => {
  const KEY = "dp-tutorial:bilingual";
  const root = document.documentElement;
  const load = () => { try { return localStorage.getItem(KEY) === "on"; } catch { return false; } };
  const save = (on) => { try { localStorage.setItem(KEY, on ? "on" : "off"); } catch { /* private mode */ } };

  root.classList.toggle("bilingual", load());

  const wire = () => {
    const box = document.getElementById("bilingual-toggle");
    if (!box) return;
    box.checked = root.classList.contains("bilingual");
    box.addEventListener("change", () => {
      root.classList.toggle("bilingual", box.checked);
      save(box.checked);
    });
  };
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", wire);
  else wire();
})();
