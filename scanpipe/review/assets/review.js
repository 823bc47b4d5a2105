// Keyboard-first review: every action has a key; the mouse is never needed.
// Images open zoomed to the contest in question, on every card of the page at once.
(function () {
  "use strict";
  var forms = [], current = 0, pendingRule = false, mode = "contest";

  function typing(e) {
    var t = e.target;
    return t && (t.tagName === "TEXTAREA" || (t.tagName === "INPUT" && t.type !== "checkbox") || t.tagName === "SELECT");
  }
  function figures() { return Array.prototype.slice.call(document.querySelectorAll("figure.viewer")); }
  function currentContest(fig) {
    if (forms.length && !fig.closest("section.case")) return forms[current].dataset.contest;
    return fig.dataset.zoomContest || null;
  }
  function regions(fig) {
    try { return JSON.parse(fig.dataset.regions || "{}"); } catch (err) { return {}; }
  }
  function setZoom(fig, z, keepCentre) {
    var scroll = fig.querySelector(".scroll"), stage = fig.querySelector(".stage");
    var old = stage.offsetWidth || scroll.clientWidth;
    var cx = (scroll.scrollLeft + scroll.clientWidth / 2) / old, cy = (scroll.scrollTop + scroll.clientHeight / 2) / (stage.offsetHeight || 1);
    z = Math.max(0.5, Math.min(10, z));
    fig.dataset.zoom = String(z);
    stage.style.width = (Math.round(z * 1000) / 10) + "%";
    if (keepCentre) {
      scroll.scrollLeft = cx * stage.offsetWidth - scroll.clientWidth / 2;
      scroll.scrollTop = cy * stage.offsetHeight - scroll.clientHeight / 2;
    }
  }
  // Zoom one card so the contest's region (image pixels: x, y, w, h) fills its frame, centred.
  function zoomToContest(fig) {
    var img = fig.querySelector(".stage img"), scroll = fig.querySelector(".scroll");
    var contest = currentContest(fig), r = contest ? regions(fig)[contest] : null;
    if (!img.naturalWidth || !r) { fitWhole(fig); return; }
    var vw = scroll.clientWidth, vh = scroll.clientHeight;
    var s = Math.min(vw / r[2], vh / r[3]) * 0.95;  // screen px per image px
    setZoom(fig, Math.max(1, s * img.naturalWidth / vw), false);  // never smaller than the whole card
    s = fig.querySelector(".stage").offsetWidth / img.naturalWidth;
    scroll.scrollLeft = r[0] * s - (vw - r[2] * s) / 2;
    scroll.scrollTop = r[1] * s - (vh - r[3] * s) / 2;
    fig.dataset.zoomed = contest;
  }
  function fitWhole(fig) {
    setZoom(fig, 1, false);
    var scroll = fig.querySelector(".scroll");
    scroll.scrollLeft = 0; scroll.scrollTop = 0;
    fig.dataset.zoomed = "";
  }
  function applyMode() {
    figures().forEach(function (fig) { if (mode === "contest") zoomToContest(fig); else fitWhole(fig); });
  }
  function zoomBy(factor) {
    figures().forEach(function (fig) { setZoom(fig, parseFloat(fig.dataset.zoom || "1") * factor, true); });
  }
  function outline() {
    var contest = forms.length ? forms[current].dataset.contest : null;
    document.querySelectorAll(".stage rect").forEach(function (r) {
      var fig = r.closest("figure.viewer");
      var wanted = contest && !fig.closest("section.case") ? contest : fig.dataset.zoomContest;
      r.classList.toggle("current", r.dataset.contest === wanted);
    });
  }
  function select(i) {
    if (!forms.length) return;
    current = (i + forms.length) % forms.length;
    forms.forEach(function (f, j) { f.classList.toggle("current", j === current); });
    outline();
    if (mode === "contest") applyMode();
    forms[current].scrollIntoView({block: "nearest"});
  }
  function fitBoxes() {
    figures().forEach(function (fig) {
      var img = fig.querySelector(".stage img"), svg = fig.querySelector(".stage svg");
      function ready() {
        if (img.naturalWidth) svg.setAttribute("viewBox", "0 0 " + img.naturalWidth + " " + img.naturalHeight);
        if (mode === "contest") zoomToContest(fig); else fitWhole(fig);
        fig.dataset.ready = "1";
      }
      if (img.complete) ready(); else { img.addEventListener("load", ready); img.addEventListener("error", function () { fig.dataset.ready = "1"; }); }
    });
  }
  function toggleBlind() {
    var on = document.cookie.split("; ").indexOf("sp_blind=1") >= 0;
    document.cookie = "sp_blind=" + (on ? "0" : "1") + "; path=/; SameSite=Strict";
    location.reload();
  }
  function go(id) { var a = document.getElementById(id); if (a) location.href = a.href; }
  function queueRows() { return Array.prototype.slice.call(document.querySelectorAll("#queue-table tbody tr")); }
  function selectRow(i) {
    var rows = queueRows(); if (!rows.length) return;
    current = (i + rows.length) % rows.length;
    rows.forEach(function (r, j) { r.classList.toggle("current", j === current); });
    rows[current].querySelector("a").focus();
  }

  document.addEventListener("keydown", function (e) {
    if (e.ctrlKey || e.metaKey || e.altKey) return;
    if (e.key === "Escape") { if (document.activeElement) document.activeElement.blur(); pendingRule = false; return; }
    if (typing(e)) return;
    var form = forms[current];
    if (pendingRule && /^[1-9]$/.test(e.key) && form) {
      var sel = form.querySelector("select[name=rule]");
      var n = parseInt(e.key, 10);
      if (sel && n < sel.options.length) sel.selectedIndex = n;
      pendingRule = false; e.preventDefault(); return;
    }
    pendingRule = false;
    if (queueRows().length) {
      if (e.key === "j") { selectRow(current + 1); e.preventDefault(); }
      else if (e.key === "k") { selectRow(current - 1); e.preventDefault(); }
      return;
    }
    switch (e.key) {
      case "j": select(current + 1); break;
      case "k": select(current - 1); break;
      case "r": pendingRule = true; break;
      case "t": if (form) form.querySelector("textarea").focus(); break;
      case "w":
        var name = form ? form.querySelector("input[name^=write_in_]") : null;
        if (!name) return;
        var box = form.querySelector("input[name=votes][value='" + name.name.slice(9) + "']");
        if (box) box.checked = true;
        name.focus(); break;
      case "Enter": if (form) { form.requestSubmit(); } break;
      case "z": mode = "contest"; applyMode(); break;
      case "+": mode = "free"; zoomBy(1.25); break;
      case "-": mode = "free"; zoomBy(1 / 1.25); break;
      case "=": mode = "whole"; applyMode(); break;
      case "b": toggleBlind(); break;
      case "n": go("next-item"); break;
      case "h": go("item-history"); break;
      case "q": go("back-queue"); go("nav-queue"); break;
      case "?": var h = document.getElementById("help"); if (h) h.open = !h.open; break;
      case "Backspace": go("again"); break;
      default:
        if (/^[0-9]$/.test(e.key) && form) {
          var cb = form.querySelector("input[type=checkbox][data-key='" + e.key + "']");
          if (cb) cb.checked = !cb.checked;
        } else { return; }
    }
    e.preventDefault();
  });

  document.addEventListener("DOMContentLoaded", function () {
    var canonical = document.body.dataset.canonical;
    // a page answering a POST (a decision) takes its own address, so reloading it asks nothing again
    if (canonical && location.pathname !== canonical) history.replaceState(null, "", canonical);
    forms = Array.prototype.slice.call(document.querySelectorAll("form.decide"));
    forms.forEach(function (f, i) { f.addEventListener("focusin", function () { if (current !== i) select(i); }); });
    if (forms.length) forms[0].classList.add("current");
    outline();
    fitBoxes();
    figures().forEach(function (fig) {
      fig.querySelector(".zoom-contest").addEventListener("click", function () { mode = "contest"; applyMode(); });
      fig.querySelector(".zoom-fit").addEventListener("click", function () { mode = "whole"; applyMode(); });
      fig.querySelector(".zoom-in").addEventListener("click", function () { mode = "free"; zoomBy(1.25); });
      fig.querySelector(".zoom-out").addEventListener("click", function () { mode = "free"; zoomBy(1 / 1.25); });
      fig.querySelector(".scroll").addEventListener("wheel", function (e) {
        if (e.ctrlKey) { e.preventDefault(); mode = "free"; zoomBy(e.deltaY < 0 ? 1.1 : 1 / 1.1); }
      }, {passive: false});
    });
    // a write-in name ticks its option
    document.querySelectorAll("input[name^=write_in_]").forEach(function (input) {
      input.addEventListener("input", function () {
        var box = input.closest("form").querySelector("input[name=votes][value='" + input.name.slice(9) + "']");
        if (box && input.value.trim()) box.checked = true;
      });
    });
    // one submission per form: a double click sends nothing more (the server refuses it anyway)
    document.querySelectorAll("form").forEach(function (f) {
      f.addEventListener("submit", function (e) {
        if (f.dataset.sent) { e.preventDefault(); return; }
        f.dataset.sent = "1";
      });
    });
  });
})();
