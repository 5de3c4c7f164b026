"""Chinese city names -> the pinyin slugs tianqi.com uses in its URLs (``/hefei/``).

Covers the municipalities, every prefecture-level city, autonomous prefecture, league and
region, plus a few well-known county-level cities. Slugs are plain toneless pinyin; ``ü`` is
written ``v`` (吕梁 lvliang). Where two places share a spelling (福州/抚州, 苏州/宿州, 台州/泰州,
伊春/宜春, 玉林/榆林 …) the first spelling goes to the better-known city; the other gets the
site's variant with a province prefix or ``shi`` suffix, and the weather tool checks the page's
own city name and falls back to the site's Chinese-name search when the guess is wrong.
"""
import difflib
import re

# province: "名称 slug" pairs, space separated
_TABLE = """
直辖市: 北京 beijing 上海 shanghai 天津 tianjin 重庆 chongqing 香港 xianggang 澳门 aomen 台北 taibei
河北: 石家庄 shijiazhuang 唐山 tangshan 秦皇岛 qinhuangdao 邯郸 handan 邢台 xingtai 保定 baoding 张家口 zhangjiakou 承德 chengde 沧州 cangzhou 廊坊 langfang 衡水 hengshui 雄安 xiongan
山西: 太原 taiyuan 大同 datong 阳泉 yangquan 长治 changzhi 晋城 jincheng 朔州 shuozhou 晋中 jinzhong 运城 yuncheng 忻州 xinzhou 临汾 linfen 吕梁 lvliang
内蒙古: 呼和浩特 huhehaote 包头 baotou 乌海 wuhai 赤峰 chifeng 通辽 tongliao 鄂尔多斯 eerduosi 呼伦贝尔 hulunbeier 巴彦淖尔 bayannaoer 乌兰察布 wulanchabu 兴安盟 xinganmeng 锡林郭勒 xilinguolemeng 阿拉善 alashanmeng 满洲里 manzhouli 二连浩特 erlianhaote
辽宁: 沈阳 shenyang 大连 dalian 鞍山 anshan 抚顺 fushun 本溪 benxi 丹东 dandong 锦州 jinzhou 营口 yingkou 阜新 fuxin 辽阳 liaoyang 盘锦 panjin 铁岭 tieling 朝阳 chaoyang 葫芦岛 huludao
吉林: 长春 changchun 吉林 jilin 四平 siping 辽源 liaoyuan 通化 tonghua 白山 baishan 松原 songyuan 白城 baicheng 延边 yanbian 延吉 yanji
黑龙江: 哈尔滨 haerbin 齐齐哈尔 qiqihaer 鸡西 jixi 鹤岗 hegang 双鸭山 shuangyashan 大庆 daqing 伊春 yichun 佳木斯 jiamusi 七台河 qitaihe 牡丹江 mudanjiang 黑河 heihe 绥化 suihua 大兴安岭 daxinganling 漠河 mohe
江苏: 南京 nanjing 无锡 wuxi 徐州 xuzhou 常州 changzhou 苏州 suzhou 南通 nantong 连云港 lianyungang 淮安 huaian 盐城 yancheng 扬州 yangzhou 镇江 zhenjiang 泰州 jstaizhou 宿迁 suqian 昆山 kunshan 江阴 jiangyin 常熟 changshu 张家港 zhangjiagang
浙江: 杭州 hangzhou 宁波 ningbo 温州 wenzhou 嘉兴 jiaxing 湖州 huzhou 绍兴 shaoxing 金华 jinhua 衢州 quzhou 舟山 zhoushan 台州 taizhou 丽水 lishui 义乌 yiwu
安徽: 合肥 hefei 芜湖 wuhu 蚌埠 bengbu 淮南 huainan 马鞍山 maanshan 淮北 huaibei 铜陵 tongling 安庆 anqing 黄山 huangshan 滁州 chuzhou 阜阳 fuyang 宿州 ahsuzhou 六安 luan 亳州 bozhou 池州 chizhou 宣城 xuancheng
福建: 福州 fuzhou 厦门 xiamen 莆田 putian 三明 sanming 泉州 quanzhou 漳州 zhangzhou 南平 nanping 龙岩 longyan 宁德 ningde
江西: 南昌 nanchang 景德镇 jingdezhen 萍乡 pingxiang 九江 jiujiang 新余 xinyu 鹰潭 yingtan 赣州 ganzhou 吉安 jian 宜春 jxyichun 抚州 jxfuzhou 上饶 shangrao
山东: 济南 jinan 青岛 qingdao 淄博 zibo 枣庄 zaozhuang 东营 dongying 烟台 yantai 潍坊 weifang 济宁 jining 泰安 taian 威海 weihai 日照 rizhao 临沂 linyi 德州 dezhou 聊城 liaocheng 滨州 binzhou 菏泽 heze
河南: 郑州 zhengzhou 开封 kaifeng 洛阳 luoyang 平顶山 pingdingshan 安阳 anyang 鹤壁 hebi 新乡 xinxiang 焦作 jiaozuo 濮阳 puyang 许昌 xuchang 漯河 luohe 三门峡 sanmenxia 南阳 nanyang 商丘 shangqiu 信阳 xinyang 周口 zhoukou 驻马店 zhumadian 济源 jiyuan
湖北: 武汉 wuhan 黄石 huangshi 十堰 shiyan 宜昌 yichang 襄阳 xiangyang 鄂州 ezhou 荆门 jingmen 孝感 xiaogan 荆州 jingzhou 黄冈 huanggang 咸宁 xianning 随州 suizhou 恩施 enshi 仙桃 xiantao 潜江 qianjiang 天门 tianmen 神农架 shennongjia
湖南: 长沙 changsha 株洲 zhuzhou 湘潭 xiangtan 衡阳 hengyang 邵阳 shaoyang 岳阳 yueyang 常德 changde 张家界 zhangjiajie 益阳 yiyang 郴州 chenzhou 永州 yongzhou 怀化 huaihua 娄底 loudi 湘西 xiangxi 吉首 jishou
广东: 广州 guangzhou 韶关 shaoguan 深圳 shenzhen 珠海 zhuhai 汕头 shantou 佛山 foshan 江门 jiangmen 湛江 zhanjiang 茂名 maoming 肇庆 zhaoqing 惠州 huizhou 梅州 meizhou 汕尾 shanwei 河源 heyuan 阳江 yangjiang 清远 qingyuan 东莞 dongguan 中山 zhongshan 潮州 chaozhou 揭阳 jieyang 云浮 yunfu
广西: 南宁 nanning 柳州 liuzhou 桂林 guilin 梧州 wuzhou 北海 beihai 防城港 fangchenggang 钦州 qinzhou 贵港 guigang 玉林 yulin 百色 baise 贺州 hezhou 河池 hechi 来宾 laibin 崇左 chongzuo
海南: 海口 haikou 三亚 sanya 三沙 sansha 儋州 danzhou 五指山 wuzhishan 琼海 qionghai 文昌 wenchang 万宁 wanning
四川: 成都 chengdu 自贡 zigong 攀枝花 panzhihua 泸州 luzhou 德阳 deyang 绵阳 mianyang 广元 guangyuan 遂宁 suining 内江 neijiang 乐山 leshan 南充 nanchong 眉山 meishan 宜宾 yibin 广安 guangan 达州 dazhou 雅安 yaan 巴中 bazhong 资阳 ziyang 阿坝 aba 甘孜 ganzi 凉山 liangshan 西昌 xichang 马尔康 maerkang 康定 kangding
贵州: 贵阳 guiyang 六盘水 liupanshui 遵义 zunyi 安顺 anshun 毕节 bijie 铜仁 tongren 黔西南 qianxinan 黔东南 qiandongnan 黔南 qiannan 凯里 kaili 都匀 duyun 兴义 xingyi
云南: 昆明 kunming 曲靖 qujing 玉溪 yuxi 保山 baoshan 昭通 zhaotong 丽江 lijiang 普洱 puer 临沧 lincang 楚雄 chuxiong 红河 honghe 文山 wenshan 西双版纳 xishuangbanna 大理 dali 德宏 dehong 怒江 nujiang 迪庆 diqing 景洪 jinghong 香格里拉 xianggelila 蒙自 mengzi 芒市 mangshi
西藏: 拉萨 lasa 日喀则 rikaze 昌都 changdu 林芝 linzhi 山南 shannan 那曲 naqu 阿里 ali
陕西: 西安 xian 铜川 tongchuan 宝鸡 baoji 咸阳 xianyang 渭南 weinan 延安 yanan 汉中 hanzhong 榆林 sxyulin 安康 ankang 商洛 shangluo 杨凌 yangling
甘肃: 兰州 lanzhou 嘉峪关 jiayuguan 金昌 jinchang 白银 baiyin 天水 tianshui 武威 wuwei 张掖 zhangye 平凉 pingliang 酒泉 jiuquan 庆阳 qingyang 定西 dingxi 陇南 longnan 临夏 linxia 甘南 gannan 敦煌 dunhuang 渭源 weiyuan
青海: 西宁 xining 海东 haidong 海北 haibei 黄南 huangnan 海南州 hainanzhou 果洛 guoluo 玉树 yushu 海西 haixi 格尔木 geermu 德令哈 delingha
宁夏: 银川 yinchuan 石嘴山 shizuishan 吴忠 wuzhong 固原 guyuan 中卫 zhongwei
新疆: 乌鲁木齐 wulumuqi 克拉玛依 kelamayi 吐鲁番 tulufan 哈密 hami 昌吉 changji 博尔塔拉 boertala 巴音郭楞 bayinguoleng 库尔勒 kuerle 阿克苏 akesu 克孜勒苏 kezilesu 阿图什 atushi 喀什 kashi 和田 hetian 伊犁 yili 伊宁 yining 塔城 tacheng 阿勒泰 aletai 石河子 shihezi 五家渠 wujiaqu 阿拉尔 alaer 图木舒克 tumushuke 北屯 beitun 铁门关 tiemenguan 双河 shuanghe 可克达拉 kekedala 昆玉 kunyu 胡杨河 huyanghe 新星 xinxing 白杨 baiyang 奎屯 kuitun 博乐 bole
"""

# Administrative suffixes people type after a name: 合肥市, 大理白族自治州, 锡林郭勒盟, 阿里地区.
_SUFFIX = re.compile(r"(特别行政区|[\u4e00-\u9fff]{0,6}自治州|[\u4e00-\u9fff]{0,6}自治县|地区|林区|市|盟|州|县|区)$")

CITIES = {}        # 名称 -> slug
PROVINCE = {}      # 名称 -> 省
for _line in _TABLE.strip().splitlines():
    _prov, _, _rest = _line.partition(":")
    _parts = _rest.split()
    for _i in range(0, len(_parts) - 1, 2):
        CITIES[_parts[_i]] = _parts[_i + 1]
        PROVINCE[_parts[_i]] = _prov.strip()
SLUGS = {slug: name for name, slug in CITIES.items()}
_ALIASES = {"海南藏族自治州": "海南州", "襄樊": "襄阳", "思茅": "普洱", "巢湖": "合肥", "莱芜": "济南",
            "西双版纳傣族自治州": "西双版纳", "香格里拉市": "香格里拉"}


def lookup(name):
    """A Chinese place name -> ``(name, slug)`` or None. Administrative suffixes are optional
    (合肥市, 延边朝鲜族自治州, 锡林郭勒盟), surrounding spaces ignored."""
    text = re.sub(r"\s+", "", name or "")
    if not text:
        return None
    if text in _ALIASES:
        text = _ALIASES[text]
    if text in CITIES:
        return text, CITIES[text]
    short = text
    for _ in range(2):
        short2 = _SUFFIX.sub("", short)
        if short2 == short or not short2:
            break
        short = short2
        if short in CITIES:
            return short, CITIES[short]
    # "延边朝鲜族自治州" -> the table's first 2-4 characters
    for size in (4, 3, 2):
        if len(text) > size and text[:size] in CITIES and _SUFFIX.search(text):
            return text[:size], CITIES[text[:size]]
    return None


def suggest(word, n=3):
    """Close table entries for an unknown slug or name (for the error message)."""
    word = (word or "").strip().lower()
    if re.search(r"[\u4e00-\u9fff]", word):
        keys = difflib.get_close_matches(word, list(CITIES), n=n, cutoff=0.5)
        return ["%s（%s）" % (k, CITIES[k]) for k in keys]
    keys = difflib.get_close_matches(word, list(SLUGS), n=n, cutoff=0.7)
    return ["%s（%s）" % (k, SLUGS[k]) for k in keys]
