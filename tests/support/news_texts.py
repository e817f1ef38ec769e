"""Short news-like texts for the real-model tests, written for them: each item is a source of two or three sentences,
a paraphrase of the whole source, a one-sentence faithful summary, and the same summary with one change that makes
it unfaithful: an entity swapped for one the source does not name, a number changed, or a negation added or removed.

The changed summary differs from the faithful one in one span only, so that `changed_span` can find it by comparing
the two strings."""

from __future__ import annotations

from dataclasses import dataclass

ENTITY, NUMBER, NEGATION = "entity", "number", "negation"


@dataclass(frozen=True)
class NewsItem:
    source: str
    paraphrase: str
    summary: str
    changed: str
    kind: str  # ENTITY, NUMBER or NEGATION: what the change in `changed` is


def changed_span(item: NewsItem) -> tuple[int, int]:
    """(start, end) of the characters of item.changed that differ from item.summary: what is left once the longest
    common prefix and the longest common suffix of the two are taken away, widened to whole words."""
    faithful, changed = item.summary, item.changed
    start = 0
    while start < min(len(faithful), len(changed)) and faithful[start] == changed[start]:
        start += 1
    end = 0
    while end < min(len(faithful), len(changed)) - start and faithful[-1 - end] == changed[-1 - end]:
        end += 1
    stop = len(changed) - end
    while start > 0 and changed[start - 1].isalnum():
        start -= 1
    while stop < len(changed) and changed[stop].isalnum():
        stop += 1
    return start, stop


ITEMS = [
    NewsItem(
        "The city council of Springfield voted on Tuesday to approve a new budget. It raises spending on public "
        "schools by five percent and cuts the parks budget by two percent.",
        "On Tuesday, Springfield's city council approved a new budget, which gives public schools five percent more "
        "money and takes two percent away from the parks.",
        "Springfield's council approved a budget that raises school spending by five percent.",
        "Springfield's council approved a budget that raises school spending by fifteen percent.",
        NUMBER,
    ),
    NewsItem(
        "Heavy rain flooded the main road near the river on Sunday. The police closed the road for most of the day "
        "while crews pumped out the water.",
        "On Sunday the main road by the river was flooded by heavy rain, so the police shut it for most of the day as "
        "workers pumped the water away.",
        "Police closed a road near the river after heavy rain flooded it on Sunday.",
        "Police closed a road near the river after heavy snow blocked it on Sunday.",
        ENTITY,
    ),
    NewsItem(
        "Maria Lopez, a baker from Denver, won the national bread prize on Friday. She thanked the six people who "
        "work in her shop and said the prize belonged to them too.",
        "On Friday the national bread prize went to Maria Lopez, a Denver baker, who thanked her six employees and "
        "said they shared the prize.",
        "Denver baker Maria Lopez won the national bread prize and thanked her six staff.",
        "Denver baker Maria Lopez won the national bread prize and thanked her sixty staff.",
        NUMBER,
    ),
    NewsItem(
        "The city museum will open its new wing in March. The wing holds two hundred paintings given by a local "
        "family, and entry will be free for the first month.",
        "In March the city museum opens a new wing with two hundred paintings donated by a family from the area; for "
        "the first month visitors will not pay to enter.",
        "The museum's new wing opens in March, and entry is free for the first month.",
        "The museum's new wing opens in March, and entry is not free for the first month.",
        NEGATION,
    ),
    NewsItem(
        "Scientists at the state university found that the lake's water level fell by three metres over the last "
        "ten years. They blame less rain and more farming near the lake.",
        "According to researchers at the state university, the lake has dropped three metres in a decade, because of "
        "lower rainfall and growing agriculture around it.",
        "The lake's level fell by three metres in ten years, scientists found.",
        "The lake's level fell by three metres in ten years, engineers found.",
        ENTITY,
    ),
    NewsItem(
        "The football club signed a new coach, Tom Baker, on a two-year contract after the old coach left in May. "
        "Baker previously coached a team in Spain.",
        "After its former coach departed in May, the football club hired Tom Baker, who used to coach in Spain, for "
        "two years.",
        "The club signed Tom Baker as its new coach on a two-year contract.",
        "The club signed Tom Baker as its new coach on a nine-year contract.",
        NUMBER,
    ),
    NewsItem(
        "A fire broke out in a warehouse in the harbour district on Monday night. Firefighters put it out within two "
        "hours, and nobody was hurt.",
        "Late on Monday a warehouse in the harbour district caught fire; firefighters had it under control in two "
        "hours and no one was injured.",
        "A warehouse fire in the harbour district was put out in two hours, and nobody was hurt.",
        "A warehouse fire in the harbour district was put out in two hours, and many were hurt.",
        NEGATION,
    ),
    NewsItem(
        "The national railway company will raise ticket prices by four percent in January. It says the money will "
        "pay for new trains on the northern lines.",
        "From January, train tickets from the national railway company will cost four percent more, to fund new "
        "trains for the northern routes.",
        "Rail tickets will cost four percent more from January to pay for new trains.",
        "Rail tickets will cost four percent more from January to pay for new airports.",
        ENTITY,
    ),
    NewsItem(
        "A study of twelve hundred adults found that people who walk every day sleep better. The researchers said "
        "even short walks of twenty minutes helped.",
        "Researchers who followed twelve hundred adults report that a daily walk, even a twenty-minute one, improves "
        "sleep.",
        "A study found that daily walks, even short ones of twenty minutes, help people sleep better.",
        "A study found that daily walks, even short ones of twenty minutes, do not help people sleep better.",
        NEGATION,
    ),
    NewsItem(
        "The mayor of Portland, Anna Reed, opened a new bridge over the river on Saturday. The bridge took three "
        "years to build and is for cyclists and walkers only.",
        "On Saturday Portland's mayor Anna Reed opened a river bridge that had been three years in the making and "
        "that only cyclists and pedestrians may use.",
        "Portland's mayor Anna Reed opened a new bridge for cyclists and walkers on Saturday.",
        "Portland's mayor Anna Reed opened a new bridge for trucks and buses on Saturday.",
        ENTITY,
    ),
    NewsItem(
        "The factory in Leeds will close next year, and its three hundred workers will lose their jobs. The company "
        "said demand for its washing machines had fallen.",
        "Next year the Leeds factory shuts down, costing three hundred workers their jobs, because fewer people buy "
        "the company's washing machines.",
        "A Leeds factory will close next year, and three hundred workers will lose their jobs.",
        "A Leeds factory will close next year, and eight hundred workers will lose their jobs.",
        NUMBER,
    ),
    NewsItem(
        "The school board decided on Wednesday that pupils will not have to wear uniforms from September. Parents "
        "had asked for the change in a survey last spring.",
        "Following a parents' survey last spring, the school board ruled on Wednesday that uniforms will no longer be "
        "required from September.",
        "From September pupils will not have to wear uniforms, the school board decided.",
        "From September pupils will have to wear uniforms, the school board decided.",
        NEGATION,
    ),
    NewsItem(
        "A small plane made an emergency landing on a motorway near Bristol on Thursday. The pilot, who was alone on "
        "board, walked away without injuries.",
        "On Thursday a light aircraft came down on a motorway close to Bristol in an emergency landing; its pilot, "
        "the only person aboard, was unhurt.",
        "A small plane landed on a motorway near Bristol, and its pilot was not injured.",
        "A small plane landed on a motorway near Glasgow, and its pilot was not injured.",
        ENTITY,
    ),
    NewsItem(
        "The central bank kept its interest rate at three percent on Thursday. Its governor said prices were still "
        "rising too fast to cut the rate.",
        "On Thursday the central bank left the interest rate unchanged at three percent, its governor saying that "
        "inflation was too high for a cut.",
        "The central bank kept its interest rate at three percent because prices are still rising.",
        "The central bank cut its interest rate to three percent because prices are still rising.",
        NEGATION,
    ),
    NewsItem(
        "Volunteers planted eight thousand trees along the coast over the weekend. The trees should protect the "
        "beach from wind and hold the sand in place.",
        "Over the weekend, eight thousand trees were planted on the coast by volunteers, to shelter the beach from the "
        "wind and keep the sand from moving.",
        "Volunteers planted eight thousand trees on the coast to protect the beach.",
        "Volunteers planted eighty thousand trees on the coast to protect the beach.",
        NUMBER,
    ),
    NewsItem(
        "The hospital in Oxford has opened a new children's ward with forty beds. Doctors said waiting times for "
        "young patients should now be shorter.",
        "A forty-bed ward for children is now open at the Oxford hospital, which doctors expect to cut waiting times "
        "for young patients.",
        "An Oxford hospital opened a children's ward with forty beds to shorten waiting times.",
        "An Oxford hospital opened a cancer ward with forty beds to shorten waiting times.",
        ENTITY,
    ),
    NewsItem(
        "The singer Lena Park cancelled her concert in Berlin because she was ill. Fans will get their money back, "
        "and a new date will be announced soon.",
        "Ill, the singer Lena Park called off her Berlin concert; ticket holders will be refunded and a new date is "
        "to follow.",
        "Lena Park cancelled her Berlin concert because of illness, and fans will get refunds.",
        "Lena Park cancelled her Berlin concert because of illness, and fans will not get refunds.",
        NEGATION,
    ),
    NewsItem(
        "A storm cut power to fifty thousand homes in the north of the country on Tuesday. Most homes had power "
        "again by the evening.",
        "Fifty thousand homes in the country's north lost electricity in a storm on Tuesday, and most were "
        "reconnected that evening.",
        "A storm cut power to fifty thousand homes in the north, most of which had it back by evening.",
        "A storm cut power to fifty thousand homes in the south, most of which had it back by evening.",
        ENTITY,
    ),
    NewsItem(
        "The town library will stay open until ten at night during the exam season. Students had asked for longer "
        "hours so that they could study there.",
        "During exam season the town library will be open until ten in the evening, after students asked for more "
        "time to study there.",
        "The library will stay open until ten at night during the exam season.",
        "The library will stay open until six at night during the exam season.",
        NUMBER,
    ),
    NewsItem(
        "Police arrested two men after a bank robbery in Madrid on Friday. The men were caught an hour later with "
        "the money in their car.",
        "On Friday, an hour after a bank in Madrid was robbed, police caught two men who had the stolen money in "
        "their car.",
        "Two men were arrested after a bank robbery in Madrid on Friday.",
        "Two women were arrested after a bank robbery in Madrid on Friday.",
        ENTITY,
    ),
    NewsItem(
        "The government said it will not build the new airport near the village. People living there had protested "
        "against the plan for two years.",
        "After two years of protests by the people who live there, the government has dropped its plan for a new "
        "airport near the village.",
        "The government will not build the planned airport near the village after two years of protests.",
        "The government will build the planned airport near the village after two years of protests.",
        NEGATION,
    ),
    NewsItem(
        "A marathon runner from Kenya, Grace Otieno, won the city race on Sunday in two hours and twenty minutes. It "
        "was her first win in the race.",
        "Kenyan runner Grace Otieno took her first victory in the city marathon on Sunday, finishing in two hours "
        "twenty minutes.",
        "Kenyan runner Grace Otieno won the city marathon in two hours and twenty minutes.",
        "Kenyan runner Grace Otieno won the city marathon in four hours and twenty minutes.",
        NUMBER,
    ),
    NewsItem(
        "The zoo welcomed a baby elephant last week, the first born there in ten years. Mother and baby are both "
        "healthy, the keepers said.",
        "Last week a baby elephant was born at the zoo, its first in a decade; keepers say the mother and the calf "
        "are doing well.",
        "The zoo's first baby elephant in ten years was born last week, and both are healthy.",
        "The zoo's first baby giraffe in ten years was born last week, and both are healthy.",
        ENTITY,
    ),
    NewsItem(
        "The water company warned that the reservoirs are only half full after a dry summer. It asked customers not "
        "to water their gardens.",
        "Following a dry summer, the water company says its reservoirs are just half full and has asked people not "
        "to water gardens.",
        "After a dry summer the reservoirs are half full, and customers were asked not to water gardens.",
        "After a dry summer the reservoirs are half full, and customers were asked to water gardens.",
        NEGATION,
    ),
    NewsItem(
        "A new bus line will connect the airport with the city centre from June. Buses will run every fifteen "
        "minutes, day and night.",
        "From June a new bus line links the airport and the city centre, with a bus every fifteen minutes around the "
        "clock.",
        "From June a new bus line will run between the airport and the centre every fifteen minutes.",
        "From June a new bus line will run between the airport and the centre every fifty minutes.",
        NUMBER,
    ),
    NewsItem(
        "The car maker recalled twenty thousand vehicles because of a fault in the brakes. Owners can have the part "
        "replaced for free.",
        "Twenty thousand cars have been recalled by their maker over a brake fault, which owners can get fixed at no "
        "cost.",
        "A car maker recalled twenty thousand vehicles over a brake fault, to be fixed for free.",
        "A car maker recalled twenty thousand vehicles over an engine fault, to be fixed for free.",
        ENTITY,
    ),
    NewsItem(
        "The health minister said that the new vaccine is safe for children. Tests on three thousand children found "
        "no serious side effects.",
        "According to the health minister, the new vaccine is safe for children: trials with three thousand of them "
        "showed no serious side effects.",
        "The new vaccine is safe for children, and tests found no serious side effects.",
        "The new vaccine is not safe for children, and tests found no serious side effects.",
        NEGATION,
    ),
    NewsItem(
        "The theatre in Dublin sold every ticket for its new play within a day. The play will run for six weeks "
        "in the spring.",
        "All the tickets for the Dublin theatre's new play went in one day; it will be staged for six weeks in spring.",
        "The Dublin theatre sold out its new play in a day; it runs for six weeks in spring.",
        "The Dublin theatre sold out its new play in a day; it runs for two weeks in spring.",
        NUMBER,
    ),
    NewsItem(
        "Farmers in the valley expect a good apple harvest this year after a warm and wet spring. Prices in the "
        "shops may fall in the autumn.",
        "A warm, wet spring means the valley's farmers are expecting plenty of apples this year, and shop prices "
        "could drop in autumn.",
        "Valley farmers expect a good apple harvest, and shop prices may fall in autumn.",
        "Valley farmers expect a good cherry harvest, and shop prices may fall in autumn.",
        ENTITY,
    ),
    NewsItem(
        "The court found the former minister guilty of taking bribes. He will be sentenced next month and may go "
        "to prison.",
        "The former minister has been convicted of accepting bribes by the court, and faces a possible prison term "
        "when he is sentenced next month.",
        "The former minister was found guilty of taking bribes and will be sentenced next month.",
        "The former minister was found not guilty of taking bribes and will be sentenced next month.",
        NEGATION,
    ),
    NewsItem(
        "The festival in Edinburgh drew more than ninety thousand visitors this summer. Hotels in the city were "
        "almost full for the whole month.",
        "More than ninety thousand people came to the Edinburgh festival this summer, keeping the city's hotels "
        "nearly full all month.",
        "The Edinburgh festival drew over ninety thousand visitors, and hotels were nearly full.",
        "The Edinburgh festival drew over nine thousand visitors, and hotels were nearly full.",
        NUMBER,
    ),
    NewsItem(
        "Engineers finished repairs on the old stone bridge, which had been closed since the floods. Cars can use it "
        "again from Monday.",
        "Repairs to the old stone bridge, shut since the floods, are done, and it reopens to cars on Monday.",
        "The old stone bridge, closed since the floods, reopens to cars on Monday after repairs.",
        "The old stone bridge, closed since the fire, reopens to cars on Monday after repairs.",
        ENTITY,
    ),
]
